"""Combinatorial exact backends (sweep, enumerate, direction-bb) and their exact geometry: predicates, realising a labeling, line and local search."""
