"""Cain's reverse graph search over Goal-Bags, with its traversals.

A node is a Goal-Bag reached from the Final-Goals by applying instructions in reverse; a plan is
a path to a bag made only of Initial-Goals.  Traversals:
  * "cgds"  Child-Generator-Deque-Search (Cain Algorithm 1): the front node yields its next child;
            the child goes to the front, the parent to the back;
  * "dfs"   depth-first over the same lazy child generators;
  * "best-first"  one priority queue of all generated children, keyed by depth + the eq. 11
            cost of the child (a global heuristic; its frontier grows fast, as the paper notes);
  * "random" is CGDS with the local heuristic replaced by a random order (Cain's Fig. 3 baseline).
A node is culled when its bag was seen at lower or equal depth, or when depth + a lower bound on
the remaining instructions cannot beat the best plan.  After a plan, search goes on for shorter.
"""

from __future__ import annotations

import heapq
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Iterator

from core.cain.goals import Bag
from core.cain.pairgen import (PairConfig, Step, child_stream, clear_caches, cost, is_initial,
                                remaining_lower_bound)

TRAVERSALS = ("cgds", "dfs", "best-first", "random")


@dataclass
class Node:
    bag: Bag
    depth: int
    parent: "Node | None"
    step: Step | None


@dataclass
class Plan:
    """Forward program as search steps, with the Goal-Bag before step 1 and after every step."""

    steps: list[Step]
    bags: list[Bag]
    nodes_at_find: int
    # time.monotonic() when the search reached it (the clock is system-wide, so a worker process's
    # stamp compares with the parent's deadline): a plan found after its budget is never reported
    found_at: float = 0.0
    searcher: str = "engine"     # the portfolio member that found it: "engine" or "published" (core.cain.native)

    @property
    def length(self) -> int:
        return len(self.steps)


def plan_from(leaf: Node, nodes: int) -> Plan:
    steps: list[Step] = []
    bags: list[Bag] = [leaf.bag]
    n = leaf
    while n.parent is not None:
        assert n.step is not None
        steps.append(n.step)
        n = n.parent
        bags.append(n.bag)
    return Plan(steps, bags, nodes, time.monotonic())


@dataclass
class Searcher:
    """Incremental search: call `run(n)` repeatedly; it returns the plans found in that slice."""

    cfg: PairConfig
    final: Bag
    traversal: str = "cgds"
    best: int = 1 << 30
    nodes: int = 0
    max_visited: int = 1_500_000
    visited: dict[Bag, int] = field(default_factory=dict)
    exhausted: bool = False

    def __post_init__(self) -> None:
        if self.traversal not in TRAVERSALS:
            raise ValueError(f"unknown traversal {self.traversal!r}")
        if self.traversal == "random":
            self.cfg.random_order = True
        root = Node(self.final, 0, None, None)
        self._dq: deque = deque([(root, None)])
        self._heap: list = [(remaining_lower_bound(self.cfg, self.final), 0, 0, root, None)]
        self._tick = 0

    # -------------------------------------------------------------- shared node logic
    def _visit(self, node: Node) -> tuple[Iterator | None, Plan | None]:
        """Node computation: cull, detect a plan, or start the child generator."""
        bag, depth = node.bag, node.depth
        prev = self.visited.get(bag)
        if prev is not None and prev <= depth:
            return None, None
        if len(self.visited) < self.max_visited:
            self.visited[bag] = depth
        self.nodes += 1
        if is_initial(self.cfg, bag):
            if depth < self.best:
                self.best = depth
                return None, plan_from(node, self.nodes)
            return None, None
        if depth + remaining_lower_bound(self.cfg, bag) >= self.best:
            return None, None
        return child_stream(self.cfg, bag), None

    def trim(self) -> None:
        """Memory guard: forget the older half of the frontier, the visited table and caches."""
        keep = len(self._dq) // 2
        while len(self._dq) > keep:
            self._dq.pop()
        if len(self._heap) > 1000:
            self._heap = heapq.nsmallest(len(self._heap) // 2, self._heap)
            heapq.heapify(self._heap)
        self.visited.clear()
        clear_caches()
        self.cfg.lb_cache.clear()
        self.cfg.cost_cache.clear()

    def _promising(self, node: Node) -> bool:
        return node.depth + remaining_lower_bound(self.cfg, node.bag) < self.best

    # -------------------------------------------------------------- traversals
    def run(self, max_nodes: int, max_seconds: float = 0.1) -> list[Plan]:
        """Explore up to `max_nodes` new nodes (and about `max_seconds`); return the plans found."""
        stop_at = time.monotonic() + max_seconds
        if self.traversal == "best-first":
            return self._run_best_first(max_nodes, stop_at)
        return self._run_lazy(max_nodes, front=self.traversal != "dfs", stop_at=stop_at)

    def _run_lazy(self, max_nodes: int, front: bool, stop_at: float) -> list[Plan]:
        plans: list[Plan] = []
        dq = self._dq
        target = self.nodes + max_nodes
        clock = time.monotonic
        while dq and self.nodes < target and clock() < stop_at:
            if front:
                node, it = dq.popleft()
            else:
                node, it = dq.pop()
            if it is None:
                it, plan = self._visit(node)
                if plan is not None:
                    plans.append(plan)
                if it is None:
                    continue
            elif not self._promising(node):
                continue
            nxt = next(it, None)
            if nxt is None:
                continue
            child_bag, step = nxt
            child = Node(child_bag, node.depth + 1, node, step)
            if front:
                dq.appendleft((child, None))
                dq.append((node, it))
            else:
                dq.append((node, it))
                dq.append((child, None))
        if not dq:
            self.exhausted = True
        return plans

    def _run_best_first(self, max_nodes: int, stop_at: float) -> list[Plan]:
        """Global best-first: every child enters one priority queue keyed by depth + eq. 11 cost."""
        plans: list[Plan] = []
        heap = self._heap
        target = self.nodes + max_nodes
        clock = time.monotonic
        while heap and self.nodes < target and clock() < stop_at:
            _f, _order, _tick, node, _ = heapq.heappop(heap)
            if not self._promising(node):
                continue
            it, plan = self._visit(node)
            if plan is not None:
                plans.append(plan)
            if it is None:
                continue
            for child_bag, step in it:
                if child_bag in self.visited and self.visited[child_bag] <= node.depth + 1:
                    continue
                self._tick += 1
                pri = node.depth + 1 + cost(self.cfg, child_bag) if not is_initial(self.cfg, child_bag) else -1.0
                heapq.heappush(heap, (pri, 0, self._tick, Node(child_bag, node.depth + 1, node, step), None))
        if not heap:
            self.exhausted = True
        return plans
