using System.Collections.Generic;
using Falconet.Buffers;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Timekeeping;

/// <summary>When the server gives memory back: slabs after the pools are idle, and a collection once per idle spell or after a large release.</summary>
public sealed class IdleMemoryTests
{
    [Fact]
    public void One_collection_per_idle_spell_of_the_server_and_none_while_requests_come()
    {
        using var pool = new SlabMemoryPool("idle-memory", trackLeaks: false, SlabMemoryPool.NoOwnerThread);
        int collections = 0;
        var memory = new IdleMemory(new[] { pool }, idleTicks: 10, now: 0, () => collections++);

        // Requests every tick: no collection, however long.
        for (long now = 1; now <= 30; now++)
        {
            memory.OnTick(now, requestsStarted: now);
        }

        collections.ShouldBe(0);

        // Then none for the idle time: one collection, not one per tick.
        for (long now = 31; now <= 60; now++)
        {
            memory.OnTick(now, requestsStarted: 30);
        }

        collections.ShouldBe(1);

        // Requests again, then idle again: one more.
        memory.OnTick(61, requestsStarted: 31);
        for (long now = 62; now <= 80; now++)
        {
            memory.OnTick(now, requestsStarted: 31);
        }

        collections.ShouldBe(2);
    }

    [Fact]
    public void A_large_release_is_followed_by_a_collection_even_while_requests_come()
    {
        using var pool = new SlabMemoryPool("idle-memory-large", trackLeaks: false, SlabMemoryPool.NoOwnerThread);
        var blocks = new List<MemoryBlock>();
        for (int i = 0; i < 400; i++)
        {
            blocks.Add(pool.Rent());
        }

        blocks.ForEach(pool.Return);
        int collections = 0;
        var memory = new IdleMemory(new[] { pool }, idleTicks: 10, now: 0, () => collections++);
        int released = 0;
        for (long now = 1; now <= 10; now++)
        {
            released += memory.OnTick(now, requestsStarted: now);
        }

        // 400 blocks took 13 slabs or more: 1.6 MiB or more went back at once.
        released.ShouldBeGreaterThanOrEqualTo(13);
        collections.ShouldBe(1);
        pool.BytesReserved.ShouldBe(0);
    }
}
