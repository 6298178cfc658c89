"""What every backend runs under: deadlines, interrupts, the incumbent trace and the heap policy of the vectorised kernels."""
