"""JSON values and texts, handled without replay knowledge: narrowed (``narrow``), decoded beside a
text they likely hold (``beside``), told minted (``minted``), addressed (``paths``), and made safe
for any reader (``safe``: the escaping every sink of server text relies on)."""
