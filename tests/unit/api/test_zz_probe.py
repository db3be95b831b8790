from pathlib import Path
import trio, trio.testing
from tests.support.cached_gets import start_cached_gets
from tests.support.callcount import profile_calls
from tests.support.wire import open_wire, parse_answer
from tests.unit.api.test_create_cost import _create


async def test_probe(tmp_path: Path) -> None:
    async with trio.open_nursery() as nursery:
        srv = await start_cached_gets(nursery, tmp_path, controllers=True, store="sqlite")
        async with open_wire(srv.plane.app) as wire:
            for i in range(10):
                assert parse_answer(await wire.exchange(_create(f"warm-{i}")))[0] == 201
            for _ in range(3):
                await trio.testing.wait_all_tasks_blocked()
            request = _create("profiled")
            async def op2():
                await wire.exchange(request)
                for _ in range(3):
                    await trio.testing.wait_all_tasks_blocked()
            stats = await profile_calls(op2)
            stats.dump_stats(f"/tmp/prof/create.prof")
        nursery.cancel_scope.cancel()
