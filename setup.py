"""ament_python package setup; also installs with plain ``pip install`` into a virtual environment."""

from glob import glob

from setuptools import find_packages, setup

package_name = "robot_state_estimator"

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*"]),
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
        ("share/" + package_name + "/launch", glob("launch/*.py")),
        # config/: the robots' settings and the RViz configuration; config/robots: the bundled descriptions
        ("share/" + package_name + "/config", glob("config/*.yaml") + glob("config/*.rviz")),
        ("share/" + package_name + "/config/robots", glob("config/robots/*")),
        ("share/" + package_name + "/config/import", glob("config/import/*")),
    ],
    install_requires=["setuptools"],
    # colcon test runs pytest (not unittest) when setup.py names it as the test dependency (the "test" extra;
    # setuptools 72+ no longer knows tests_require)
    extras_require={"test": ["pytest", "hypothesis"]},
    zip_safe=True,
    maintainer="robot_state_estimator developers",
    maintainer_email="dev@robot-state-estimator.invalid",
    description="Floating-base state estimation for legged robots: IMU + leg-kinematics EKF, ROS 2 node.",
    license="BSD-3-Clause",
    python_requires=">=3.10",
    entry_points={
        "console_scripts": [
            "estimator_node = robot_state_estimator.ros.entry:main",
            "bag_player = robot_state_estimator.ros.bag_player:main",
            "robot-state-estimator = robot_state_estimator.tools.cli:main",
            "replay = robot_state_estimator.tools.cli:replay_main",
            "simulate = robot_state_estimator.tools.cli:simulate_main",
            "precompile_kernels = robot_state_estimator.estimation.precompile:main",
        ],
    },
)
