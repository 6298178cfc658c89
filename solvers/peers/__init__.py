"""Peers the benchmark measures against: the naive big-M model, Gurobi's big-M model and its environment, E01Loss."""
