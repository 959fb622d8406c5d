"""`python -m bench`: runs every benchmark in quick mode."""

import sys

from bench import bench_sql_services

if __name__ == "__main__":
    sys.argv = [sys.argv[0], "--quick", *sys.argv[1:]]
    bench_sql_services.cli()
