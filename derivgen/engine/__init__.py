"""The engine layer: dependency counting, the ready queue, the backward entry points (``backward``,
``grad``), CopySlices and whole-graph fusion."""
