# iwarp/: the software RNIC (filled in by the iwarp issue).
