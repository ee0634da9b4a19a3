"""openwop runs of the conformance fixtures: the run records and their event logs
(../shared/spec/openwop-host-sample-seams.md §4). The fixtures' memory actions, which go
through the store facade, are activities/fixture_actions.py."""
