"""derivgen's test suite, in folders mirroring the package layers."""
