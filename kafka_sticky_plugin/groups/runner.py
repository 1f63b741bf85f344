"""Drive a consumer group on a real broker: start, stop, restart and freeze members; wait
until the group is stable; read back who owns what.

A :class:`ConsumerGroupRunner` owns its members and one :class:`~.events.EventLog`. Members are
threads by default (one process, cheap on a 2-core CI machine); ``process=True`` gives a child
process that can be frozen with SIGSTOP (the KIP-341 "debugger pause") or crashed.

Each member runs one *client* (:attr:`~.member_config.MemberConfig.client`, per member or for the
whole group): ``kafka-python`` (this package's assignors on kafka-python), ``confluent``
(librdkafka through :mod:`kafka_sticky_plugin.confluent`), ``aiokafka``, or a client registered
with :func:`register_child_client`: a child process of another program speaking the same JSON
lines, whose client log :meth:`ConsumerGroupRunner.java_logs` lists (the repository's lab
registers ``java-<version>``, the genuine Java ``KafkaConsumer`` in a child JVM, in
``testlab/java_member.py``). All of them report the same events, so every analysis and check
applies unchanged.

*Stable* (:meth:`ConsumerGroupRunner.wait_stable`) means, for the live members considered:
every one reports the same generation id, their last reported assignments cover every
partition of the subscribed topics exactly once, every member owns at least one partition when
there are at least as many partitions as members, and no rebalance callback happened for
``quiet_s`` seconds.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType

from .analysis import current_ownership
from .events import EventLog, OwnershipEvent, Partition, member_key
from .member_config import MemberConfig
from .member_pack import MemberPack, PackedMember
from .member_process import PYTHON_CLIENTS, MemberHandle, ProcessMember, ThreadMember

__all__ = [
    "ChildMemberFactory",
    "ConsumerGroupRunner",
    "GroupNotStable",
    "StableGroup",
    "register_child_client",
    "register_pack_command",
]

#: Starts a member of a client this package does not run itself: given its config, the
#: group's event log and the path its client log goes to.
ChildMemberFactory = Callable[[MemberConfig, EventLog, Path], MemberHandle]
_CHILD_CLIENTS: dict[str, ChildMemberFactory] = {}


#: The child program that runs several members of a child client in one process (given the
#: client name and the path its client log goes to): :meth:`ConsumerGroupRunner.start_pack`.
PackCommand = Callable[[str, Path], list[str]]
_PACK_COMMANDS: dict[str, PackCommand] = {}


def register_pack_command(prefix: str, command: PackCommand) -> None:
    """:meth:`ConsumerGroupRunner.start_pack` runs members whose ``client`` begins with
    ``prefix`` in the program ``command`` gives (it speaks :mod:`.member_pack`'s lines)."""
    _PACK_COMMANDS[prefix] = command


def register_child_client(prefix: str, factory: ChildMemberFactory) -> None:
    """Runners start every member whose ``client`` begins with ``prefix`` with ``factory``
    (always a child process; ``process=False`` does not apply)."""
    _CHILD_CLIENTS[prefix] = factory


class GroupNotStable(AssertionError):
    """The group did not become stable in time; the message shows the last state seen."""


@dataclass(frozen=True)
class StableGroup:
    """A stable generation: its id, when it was observed, and each member's partitions."""

    generation: int
    t: float
    assignment: dict[str, tuple[Partition, ...]]

    def owner_of(self) -> dict[Partition, str]:
        """Partition -> logical member name."""
        return {p: m for m, parts in self.assignment.items() for p in parts}


class ConsumerGroupRunner:
    """Members of one group id subscribed to the same topics (see module docstring)."""

    def __init__(
        self,
        bootstrap: str,
        group_id: str,
        topics: Mapping[str, int],
        assignors: Iterable[str],
        log: EventLog | None = None,
        **member_settings: object,
    ) -> None:
        """``topics`` maps each subscribed topic to its partition count (kept up to date by
        :meth:`set_partition_count`); ``member_settings`` are extra :class:`MemberConfig`
        fields (timeouts, ``install_hooks``...)."""
        self.bootstrap = bootstrap
        self.group_id = group_id
        self.partitions_per_topic = dict(topics)
        self.assignors = tuple(assignors)
        self.log = log if log is not None else EventLog()
        self._member_settings = dict(member_settings)
        #: more :class:`MemberConfig` fields for every incarnation started with a
        #: ``group_instance_id`` (over ``member_settings``, under a call's own settings), say a
        #: longer session for a static member; set before starting members
        self.static_member_settings: dict[str, object] = {}
        self._members: dict[str, MemberHandle] = {}
        self._incarnations: dict[str, int] = {}
        self._child_log_dir: Path | None = None
        self._child_logs: list[Path] = []
        self._packs: list[MemberPack] = []

    # -- membership ----------------------------------------------------------------------

    def _config(
        self,
        name: str,
        instance_id: str | None,
        assignors: tuple[str, ...] | None,
        overrides: Mapping[str, object] | None = None,
    ) -> MemberConfig:
        incarnation = self._incarnations.get(name, -1) + 1
        self._incarnations[name] = incarnation
        base = MemberConfig(
            bootstrap=self.bootstrap,
            group_id=self.group_id,
            topics=tuple(sorted(self.partitions_per_topic)),
            member=name,
            incarnation=incarnation,
            assignors=assignors if assignors is not None else self.assignors,
            group_instance_id=instance_id,
        )
        static = self.static_member_settings if instance_id is not None else {}
        settings = {**self._member_settings, **static, **(overrides or {})}
        return replace(base, **settings)  # type: ignore[arg-type]

    def _handle(self, config: MemberConfig, process: bool) -> MemberHandle:
        child = [f for prefix, f in _CHILD_CLIENTS.items() if config.client.startswith(prefix)]
        if child:
            path = self._child_log(f"{config.member}-{config.incarnation}.log")
            return child[0](config, self.log, path)
        if config.client not in PYTHON_CLIENTS:
            hint = ""
            if config.client.startswith("java-"):
                hint = " (Java members run from a checkout: import testlab.java_member)"
            raise ValueError(f"unknown member client {config.client!r}{hint}")
        return ProcessMember(config, self.log) if process else ThreadMember(config, self.log)

    def _child_log(self, name: str) -> Path:
        """The path of a new child member's (or pack's) client log, in this runner's own
        temporary directory (made on first use, deleted when the runner is collected or the
        interpreter exits)."""
        if self._child_log_dir is None:
            self._child_log_dir = Path(tempfile.mkdtemp(prefix="child-members-"))
            # Deleted with the runner (or at exit): a Java member's log is complete only
            # once its JVM has stopped, so callers read it after close().
            weakref.finalize(self, shutil.rmtree, str(self._child_log_dir), True)
        path = self._child_log_dir / name
        self._child_logs.append(path)
        return path

    def java_logs(self) -> list[Path]:
        """The client log file of every child-client (Java) member incarnation started so
        far; readable after :meth:`close` (complete only then), for as long as the runner
        lives."""
        return list(self._child_logs)

    def start_member(
        self,
        name: str,
        process: bool = False,
        instance_id: str | None = None,
        assignors: Iterable[str] | None = None,
        **settings: object,
    ) -> MemberHandle:
        """Start (a new incarnation of) member ``name``; ``assignors`` overrides the group's
        assignor list for this incarnation (a rolling upgrade changes it member by member),
        ``settings`` the group's member settings (for example ``client_rack``, or ``client``: see
        the module docstring)."""
        if name in self._members and self._members[name].alive:
            raise RuntimeError(f"member {name} is already running")
        config = self._config(name, instance_id, tuple(assignors) if assignors else None, settings)
        handle = self._handle(config, process)
        self._members[name] = handle
        handle.start()
        return handle

    def start_members(self, names: Iterable[str], process: bool = False) -> None:
        """Start several members, each as soon as the previous one is subscribed."""
        for name in names:
            self.start_member(name, process=process)

    def start_pack(
        self,
        names: Iterable[str],
        timeout_s: float = 60.0,
        per_member: Mapping[str, Mapping[str, object]] | None = None,
        **settings: object,
    ) -> MemberPack:
        """Start members ``names`` in one new child process (:mod:`.member_pack`: several
        members per process, so that hundreds fit on 2 cores; for a child client, the program
        :func:`register_pack_command` registered, say one JVM), one after the other;
        ``settings`` as for :meth:`start_member`, ``per_member`` more of them by name (say,
        each member's ``topics``). Each is then a member like any other
        (:meth:`restart_member` starts its next incarnation in the same process)."""
        client = str(settings.get("client", self._member_settings.get("client", "")))
        commands = [c for prefix, c in _PACK_COMMANDS.items() if client.startswith(prefix)]
        command = None
        if commands:
            command = commands[0](client, self._child_log(f"pack-{len(self._packs)}.log"))
        elif client and client not in PYTHON_CLIENTS:
            raise ValueError(f"no member pack runs client {client!r}")
        pack = MemberPack(self.log, command=command)
        self._packs.append(pack)
        for name in names:
            if name in self._members and self._members[name].alive:
                raise RuntimeError(f"member {name} is already running")
            own = {**settings, **(per_member or {}).get(name, {})}
            handle = pack.handle(self._config(name, None, None, own))
            self._members[name] = handle
            handle.start(timeout_s)
        return pack

    def stop_member(self, name: str, timeout_s: float = 30.0) -> None:
        """Close member ``name`` cleanly (commit on revoke, LeaveGroup)."""
        self._members[name].stop(timeout_s)

    def restart_member(
        self,
        name: str,
        timeout_s: float = 30.0,
        assignors: Iterable[str] | None = None,
        client: str | None = None,
    ) -> MemberHandle:
        """Stop member ``name`` and start its next incarnation with the same settings (and
        the same assignors and client unless ``assignors``/``client`` is given: a rolling
        migration swaps the client member by member)."""
        old = self._members[name]
        process = isinstance(old, ProcessMember)
        instance_id = old.config.group_instance_id
        old.stop(timeout_s)
        if isinstance(old, PackedMember):  # the same settings, in the same process
            incarnation = self._incarnations[name] + 1
            self._incarnations[name] = incarnation
            config = replace(
                old.config,
                incarnation=incarnation,
                assignors=tuple(assignors) if assignors else old.config.assignors,
                client=client if client is not None else old.config.client,
            )
            handle = old.pack.handle(config)
            self._members[name] = handle
            handle.start(timeout_s)
            return handle
        return self.start_member(
            name,
            process=process,
            instance_id=instance_id,
            assignors=tuple(assignors) if assignors else old.config.assignors,
            client=client if client is not None else old.config.client,
        )

    def resubscribe_member(self, name: str, topics: Iterable[str]) -> None:
        """Ask running member ``name`` (a kafka-python or aiokafka thread member) to subscribe
        to ``topics`` instead of what it subscribes to now (KIP-70); the caller keeps
        :attr:`partitions_per_topic` (what stable means) up to date."""
        handle = self._members[name]
        if not isinstance(handle, ThreadMember) or handle.config.client not in (
            "kafka-python",
            "aiokafka",
        ):
            raise ValueError(f"member {name} cannot change its subscription while running")
        handle.resubscribe(list(topics))

    def wait_delivered(
        self, acknowledged: Mapping[Partition, set[int]], timeout_s: float = 30.0
    ) -> bool:
        """Wait until every acknowledged offset was delivered to some member (True), or
        ``timeout_s`` passed (False: the caller's delivery analysis will show what is lost)."""
        wanted = {(t, p, o) for (t, p), offsets in acknowledged.items() for o in offsets}
        deadline = time.monotonic() + timeout_s
        while True:
            seen = {(d.topic, d.partition, d.offset) for d in self.log.deliveries()}
            if wanted <= seen:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.2)

    def member(self, name: str) -> MemberHandle:
        """The handle of member ``name``'s current incarnation."""
        return self._members[name]

    def live_keys(self) -> dict[str, str]:
        """Logical name -> incarnation key of every running member."""
        return {
            name: member_key(name, handle.config.incarnation)
            for name, handle in self._members.items()
            if handle.alive
        }

    def child_processes(self) -> tuple[set[int], int]:
        """The process ids of the running child processes that hold members (packs, process
        and Java members), and how many running members they hold (the others are threads
        of this process)."""
        pids: set[int] = set()
        held = 0
        for handle in self._members.values():
            if not handle.alive:
                continue
            process = getattr(handle, "_process", None)
            pid = (
                handle.pack.pid
                if isinstance(handle, PackedMember)
                else getattr(process, "pid", None)
            )
            if pid is not None:
                pids.add(int(pid))
                held += 1
        return pids, held

    def set_partition_count(self, topic: str, count: int) -> None:
        """Tell the runner a topic now has ``count`` partitions (after growing it)."""
        self.partitions_per_topic[topic] = count

    def all_partitions(self) -> set[Partition]:
        """Every partition of every subscribed topic."""
        return {(t, p) for t, n in self.partitions_per_topic.items() for p in range(n)}

    # -- observation ---------------------------------------------------------------------

    def _latest_generation(self, events: list[OwnershipEvent], key: str) -> int:
        generation = -1
        for e in events:
            if e.key == key and e.kind == "generation":
                generation = e.generation
        return generation

    def wait_stable(
        self,
        timeout_s: float = 60.0,
        quiet_s: float = 1.0,
        members: Iterable[str] | None = None,
        expect_partitions: set[Partition] | None = None,
    ) -> StableGroup:
        """Wait until the group is stable (module docstring) and return the assignment.

        ``members`` limits the check to those logical members (for example, leave out one
        that is frozen). Raises :class:`GroupNotStable` with the last state on timeout.
        """
        deadline = time.monotonic() + timeout_s
        state = "nothing observed"
        while time.monotonic() < deadline:
            live = self.live_keys()
            names = sorted(live if members is None else (n for n in members if n in live))
            events = self.log.events()
            owned = current_ownership(events)
            assignment = {n: owned.get(live[n], ()) for n in names}
            # librdkafka does not tell Python its generation: confluent members are judged by
            # their assignment alone (see confluent_member).
            generations = {
                n: self._latest_generation(events, live[n])
                for n in names
                if self._members[n].config.client != "confluent"
            }
            expected = expect_partitions if expect_partitions is not None else self.all_partitions()
            flat = [p for parts in assignment.values() for p in parts]
            quiet_for = time.monotonic() - max(
                (e.t for e in events if e.kind in ("assigned", "revoked", "lost", "generation")),
                default=0.0,
            )
            state = f"generations={generations} assignment={assignment} quiet_for={quiet_for:.1f}s"
            stable = (
                bool(names)
                and len(set(generations.values())) <= 1
                and min(generations.values(), default=0) >= 0
                and len(flat) == len(set(flat))
                and set(flat) == expected
                and (len(expected) < len(names) or all(assignment.values()))
                and quiet_for >= quiet_s
            )
            if stable:
                return StableGroup(
                    generation=next(iter(generations.values()), -1),
                    t=time.monotonic(),
                    assignment=assignment,
                )
            time.sleep(0.1)
        raise GroupNotStable(f"group {self.group_id} not stable after {timeout_s}s: {state}")

    # -- teardown ------------------------------------------------------------------------

    def close(self, timeout_s: float = 30.0) -> None:
        """Stop every member at once (in parallel: closing one by one would rebalance)."""
        errors: list[BaseException] = []

        def stop(handle: MemberHandle) -> None:
            try:
                handle.stop(timeout_s)
            except BaseException as exc:  # collected and re-raised below
                errors.append(exc)

        threads = [
            threading.Thread(target=stop, args=(h,), daemon=True)
            for h in self._members.values()
            if h.alive
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout_s + 5)
        for handle in self._members.values():
            if isinstance(handle, ProcessMember):
                handle.kill()
        for pack in self._packs:
            try:
                pack.close(timeout_s)
            except TimeoutError as exc:
                errors.append(exc)
        if errors:
            raise errors[0]

    def __enter__(self) -> ConsumerGroupRunner:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
