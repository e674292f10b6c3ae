"""What the launch tests need around launch_pytest: the package in an ament prefix, a probe node, output capture.

``ros2 launch`` and launch_ros's ``Node(package=...)`` find a package through the ament index on
``AMENT_PREFIX_PATH``: the ``share/ament_index/resource_index/packages/<pkg>`` marker, ``share/<pkg>/`` and the
executables in ``lib/<pkg>/``. Under ``colcon test`` that is the workspace's install prefix, used as it is. In the
project's venv (``make test``) the editable install provides none of it, so :func:`source_prefix` lays out a
prefix over this source tree (symlinks to ``package.xml``, ``launch/`` and ``config/``; the two executables as
scripts of this interpreter), what ``colcon build --symlink-install`` would make. The launched node then runs this
tree's code, with the numba cache ``make setup`` filled.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "robot_state_estimator"
EXECUTABLES = {
    "estimator_node": "robot_state_estimator.ros.entry",
    "bag_player": "robot_state_estimator.ros.bag_player",
}


def installed_share() -> Path | None:
    """The package's share directory in the ament index (a colcon install), or None."""
    try:
        from ament_index_python.packages import get_package_share_directory

        return Path(get_package_share_directory(PACKAGE))
    except Exception:  # PackageNotFoundError, or AMENT_PREFIX_PATH unset (OSError/KeyError)
        return None


def source_prefix(root: Path) -> Path:
    """An ament prefix under ``root`` whose package ``robot_state_estimator`` is this source tree."""
    index = root / "share" / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True, exist_ok=True)
    (index / PACKAGE).write_text("")
    share = root / "share" / PACKAGE
    share.mkdir(parents=True, exist_ok=True)
    for name in ("package.xml", "config"):
        link = share / name
        if not link.exists():
            link.symlink_to(REPO_ROOT / name)
    (share / "launch").mkdir(exist_ok=True)  # a real folder: ros2 launch searches it without following links
    for source in (REPO_ROOT / "launch").glob("*.py"):
        link = share / "launch" / source.name
        if not link.exists():
            link.symlink_to(source)
    lib = root / "lib" / PACKAGE
    lib.mkdir(parents=True, exist_ok=True)
    for exe, module in EXECUTABLES.items():
        script = lib / exe
        script.write_text(f"#!{sys.executable}\nimport sys\nfrom {module} import main\nsys.exit(main())\n")
        script.chmod(0o755)
    return root


def launch_environment(tmp: Path) -> dict[str, str]:
    """The variables to set for launching this package: ``AMENT_PREFIX_PATH`` with the package (the colcon
    install when it is in the index, else :func:`source_prefix`) and this interpreter's prefix (the ROS 2
    packages of the venv), and ``PYTHONPATH`` with this tree first when it is the source prefix."""
    current = [p for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    env: dict[str, str] = {}
    if installed_share() is None:
        prefix = source_prefix(tmp)
        current.insert(0, str(prefix))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH", "")) if p)
    if sys.prefix not in current:
        current.append(sys.prefix)
    env["AMENT_PREFIX_PATH"] = os.pathsep.join(current)
    return env


class OutputLog:
    """Collects what launched processes print (launch's ``OnProcessIO``), thread-safe enough for ``in``."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.exits: dict[str, int | None] = {}
        self.started: dict[str, float] = {}
        self.exited: dict[str, float] = {}

    def handlers(self) -> list[Any]:
        """launch actions that record output, starts and exits of every process of the launch."""
        from launch.actions import RegisterEventHandler
        from launch.event_handlers import OnProcessExit, OnProcessIO, OnProcessStart

        def on_io(event: Any, context: Any = None) -> None:
            self.lines.extend(event.text.decode(errors="replace").splitlines())

        def on_start(event: Any, context: Any = None) -> None:
            self.started[event.action.name] = time.monotonic()

        def on_exit(event: Any, context: Any = None) -> None:
            self.exits[event.action.name] = event.returncode
            self.exited[event.action.name] = time.monotonic()

        return [
            RegisterEventHandler(OnProcessIO(on_stdout=on_io, on_stderr=on_io)),
            RegisterEventHandler(OnProcessStart(on_start=on_start)),
            RegisterEventHandler(OnProcessExit(on_exit=on_exit)),
        ]

    def text(self) -> str:
        return "\n".join(self.lines)

    def wait_for(self, needle: str, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while needle not in self.text():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True


class Probe:
    """A node in its own rclpy context (the test thread) that talks to the launched estimator."""

    def __init__(self, name: str) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor

        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)

    def spin_until(self, condition: Callable[[], bool], timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while not condition():
            if time.monotonic() > deadline:
                return condition()
            self.executor.spin_once(timeout_sec=0.01)
        return True

    def collect(self, msg_type: Any, topic: str, qos: Any = 100) -> list[Any]:
        received: list[Any] = []
        self.node.create_subscription(msg_type, topic, received.append, qos)
        return received

    def parameters(self, node_fqn: str, names: list[str], timeout_s: float = 20.0) -> dict[str, Any]:
        """The values of ``names`` of the node ``node_fqn`` (``GetParameters``), by name."""
        from rcl_interfaces.srv import GetParameters
        from rclpy.parameter import parameter_value_to_python

        client = self.node.create_client(GetParameters, f"{node_fqn}/get_parameters")
        assert client.wait_for_service(timeout_sec=timeout_s), f"{node_fqn}/get_parameters not served"
        future = client.call_async(GetParameters.Request(names=names))
        assert self.spin_until(future.done, timeout_s), "GetParameters not answered"
        return {n: parameter_value_to_python(v) for n, v in zip(names, future.result().values)}

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        self.context.try_shutdown()


def go1_description_xml() -> str:
    """The bundled Go1 description as URDF text (what robot_state_publisher would publish)."""
    from robot_state_estimator.common.paths import robot_description_path
    from robot_state_estimator.description.xml_input import expand_xacro

    path = robot_description_path("go1")
    return expand_xacro(path.read_text(), path)


#: N m, joint torques of a Go1 standing on its four feet (hip, thigh, calf per leg): the torque-estimated normal
#: force is about 37 N a foot (a 12 kg robot), above the contact threshold, so the filter's initialisation, which
#: waits for a loaded foot (ekf.init_wait_for_loaded_feet), starts at once
STANDING_EFFORT = (0.0, -2.0, 5.0) * 4


def loaded_standing(start_ns: int, duration_s: float, *, rate_hz: float) -> list[Any]:
    """``streams.standing`` (IMU then joints at every stamp) with :data:`STANDING_EFFORT` as the joint efforts."""
    from robot_state_estimator.common.samples import JointSample
    from robot_state_estimator.io import messages
    from robot_state_estimator.ros.message_types import TYPES

    from .streams import GO1_JOINTS, STAND_Q, Step, standing

    out = []
    for step in standing(start_ns, duration_s, rate_hz=rate_hz):
        if step.kind == "joints":
            sample = JointSample(step.stamp_ns, GO1_JOINTS, STAND_Q, 0.0 * STAND_Q, STANDING_EFFORT)
            step = Step("joints", step.stamp_ns, messages.joint_state_msg(TYPES, sample))
        out.append(step)
    return out
