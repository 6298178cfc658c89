"""Mixed-integer models of halfspace 0-1 ERM and the backends that hand them to a MIP solver (HiGHS, SCIP, Pyomo, CP-SAT)."""
