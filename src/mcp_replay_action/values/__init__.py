"""JSON values and texts read fast and without replay knowledge: narrowing, decoding beside, minted values, finding paths."""
