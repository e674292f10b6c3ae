# Every target sets up .venv first (scripts/setup.sh: idempotent, seconds when already done).
VENV ?= .venv
BIN := $(VENV)/bin
export ROS_AUTOMATIC_DISCOVERY_RANGE ?= LOCALHOST
# Two pytest-xdist workers (the 2-core machine of the rule); each module one work unit, the ROS modules together
# in one (test/conftest.py: pytest_collection_modifyitems). PYTEST_ARGS="-n 0" runs the suite serially.
PYTEST_ARGS ?= -n 2 --dist loadgroup

.PHONY: setup demo test lint typecheck bench lock clean

setup:
	@bash scripts/setup.sh

## The main job: simulate a Go1 trot, replay it through the estimator with ground truth, then the real Go1 run.
demo: setup
	$(BIN)/robot-state-estimator demo

## The whole test suite, with lint and format checks and the type check; then the README's colcon steps
## (build, launch tests, test-result) in a temporary workspace (skipped without the ROS 2 kit ../shared/ros2).
test: setup lint typecheck
	$(BIN)/python -m pytest $(PYTEST_ARGS)
	bash scripts/colcon_check.sh $(VENV)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: setup
	$(BIN)/mypy

## Throughput, latency and memory; JSON in bench/results/.
bench: setup
	$(BIN)/robot-state-estimator bench --output bench/results

## Re-pin requirements.txt from requirements.in (pip's resolver report; see scripts/lock.py).
lock: setup
	$(BIN)/python scripts/lock.py

clean:
	rm -rf $(VENV) build install log .pytest_cache .ruff_cache .mypy_cache
