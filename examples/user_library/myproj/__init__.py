"""myproj: the numpy forwards of the example op library (see ../ops.yaml)."""
