"""Cover-cut branch-and-cut backends (scip-bc, gurobi-bc): the model, the separation of violated cores, the parallel split."""
