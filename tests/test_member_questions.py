"""A question that names a type and asks something of it ("how does TaskQueue grow its
backing array") is answered by the member made of its words, through the real engine: Java
names its constructors after the type, and they used to take the type's credit for the name
(exact-identifier) and fill the first places. A question about the type itself still finds
its header first."""

from __future__ import annotations

import pytest

from code_evidence.api import FindRequest
from code_evidence.engine import Engine

QUEUE = """package work;

/** A queue of tasks kept in a backing array that grows as tasks arrive. */
public class TaskQueue {
    private Object[] tasks;
    private int size;

    /** Creates a queue whose backing array holds ten tasks before it has to grow. */
    public TaskQueue() {
        this(10);
    }

    /**
     * Creates a queue whose backing array holds {@code capacity} tasks before it grows.
     * @param capacity the initial size of the backing array
     */
    public TaskQueue(int capacity) {
        tasks = new Object[capacity];
    }

    /** Creates a queue holding the given tasks; the backing array grows from their count. */
    public TaskQueue(Object[] initial) {
        this(initial.length);
        for (Object t : initial) add(t);
    }

    public void add(Object task) {
        if (size == tasks.length) grow(size + 1);
        tasks[size++] = task;
    }

    private void grow(int minCapacity) {
        int next = Math.max(minCapacity, tasks.length * 2);
        Object[] copy = new Object[next];
        System.arraycopy(tasks, 0, copy, 0, size);
        tasks = copy;
    }

    public Object poll() {
        if (size == 0) return null;
        Object first = tasks[0];
        System.arraycopy(tasks, 1, tasks, 0, --size);
        return first;
    }
}
"""

WORKER = """package work;

public class Worker {
    private final TaskQueue queue = new TaskQueue(4);

    public void runOnce() {
        Object task = queue.poll();
        if (task instanceof Runnable r) r.run();
    }
}
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("members")
    ws = root / "ws"
    (ws / "src/work").mkdir(parents=True)
    (ws / "src/work/TaskQueue.java").write_text(QUEUE)
    (ws / "src/work/Worker.java").write_text(WORKER)
    with Engine(ws, root / "idx") as eng:
        eng.index()
        yield eng


def symbols(eng: Engine, question: str) -> list[str]:
    res = eng.find(FindRequest(question, budget_tokens=0))
    return [r.symbol for r in res.results]


def test_the_member_made_of_the_question_s_words_comes_before_the_constructors(
    engine: Engine,
) -> None:
    """The constructors' comments say "backing array" and "grow" too, and each is as short:
    they used to fill the first places, ``grow`` after all three. The type's header (whose
    comment says it all) may stay first."""
    found = symbols(engine, "how does TaskQueue grow its backing array")
    assert "TaskQueue.grow" in found[:2], found
    assert found.index("TaskQueue.grow") < found.index("TaskQueue.TaskQueue"), found


def test_a_question_about_the_type_itself_finds_its_header(engine: Engine) -> None:
    found = symbols(engine, "where is the TaskQueue class defined")
    assert found[0] == "TaskQueue", found
