"""Standing commitments inferred from memory entries ("remind me in 5 days to send the
invoice", "check back every Thursday at 17:00", "follow up when the contract is signed").

Pure parsing only, no database and no Temporal: ``inference.infer_commitment`` turns an
entry's text and tags into a ``schemas.commitment_spec`` spec plus a canonical condition
string; ``recurrence.next_occurrence`` computes when a recurring one fires next.
"""
