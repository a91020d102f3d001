"""Speed and memory measurements, each a script: python3 benchmarks/<name>.py --help."""
