using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Shouldly;

namespace Falconet.Runtime.Tests.Buffers;

/// <summary>Memory given back: free slabs leave the pool when asked, rented blocks keep theirs, and the garbage collector frees them.</summary>
public sealed class SlabReleaseTests
{
    private const int Timeout = 20_000;

    [Fact(Timeout = Timeout)]
    public Task Only_slabs_whose_every_block_is_free_are_released() => SlabMemoryPoolTests.OnOwnThread(() =>
    {
        using var pool = new SlabMemoryPool("release-shared", trackLeaks: false, SlabMemoryPool.NoOwnerThread);
        var rented = new List<MemoryBlock>();
        for (int i = 0; i < 200; i++)
        {
            rented.Add(pool.Rent());
        }

        long slabs = pool.SlabsAllocated;
        slabs.ShouldBe(7);

        // One block stays rented: its slab stays; every other slab is wholly free.
        MemoryBlock kept = rented[0];
        foreach (MemoryBlock block in rented.GetRange(1, rented.Count - 1))
        {
            pool.Return(block);
        }

        pool.ReleaseFreeSlabs().ShouldBe((int)slabs - 1);
        pool.SlabsReleased.ShouldBe(slabs - 1);
        pool.BytesReserved.ShouldBe(SlabMemoryPool.SlabSize);
        pool.BlocksOutstanding.ShouldBe(1);

        // The kept slab still serves: its free blocks are rented before any new slab is cut.
        var again = new List<MemoryBlock>();
        for (int i = 0; i < 20; i++)
        {
            MemoryBlock block = pool.Rent();
            SameArray(block, kept).ShouldBeTrue();
            again.Add(block);
        }

        pool.SlabsAllocated.ShouldBe(slabs);
        foreach (MemoryBlock block in again)
        {
            pool.Return(block);
        }

        pool.Return(kept);
        pool.ReleaseFreeSlabs().ShouldBe(1);
        pool.BytesReserved.ShouldBe(0);
        pool.ReleaseFreeSlabs().ShouldBe(0);
    });

    [Fact(Timeout = Timeout)]
    public Task Blocks_of_a_released_slab_are_never_handed_out_again() => SlabMemoryPoolTests.OnOwnThread(() =>
    {
        using var pool = new SlabMemoryPool("release-fresh", trackLeaks: false, SlabMemoryPool.NoOwnerThread);
        var first = new List<MemoryBlock>();
        for (int i = 0; i < 40; i++)
        {
            first.Add(pool.Rent());
        }

        foreach (MemoryBlock block in first)
        {
            pool.Return(block);
        }

        pool.ReleaseFreeSlabs().ShouldBe(2);
        var second = new List<MemoryBlock>();
        for (int i = 0; i < 40; i++)
        {
            MemoryBlock block = pool.Rent();
            first.ShouldNotContain(block);
            second.Add(block);
        }

        foreach (MemoryBlock block in second)
        {
            pool.Return(block);
        }

        pool.SlabsAllocated.ShouldBe(4);
        pool.BlocksOutstanding.ShouldBe(0);
    });

    [Fact(Timeout = Timeout)]
    public Task On_the_owner_thread_the_owner_s_free_blocks_count_and_elsewhere_their_slabs_stay() => SlabMemoryPoolTests.OnOwnThread(() =>
    {
        using var pool = new SlabMemoryPool("release-owner");
        var rented = new List<MemoryBlock>();
        for (int i = 0; i < 20; i++)
        {
            rented.Add(pool.Rent());
        }

        // Returned on the owner thread: they wait in the owner's own stack, which no other thread may touch.
        foreach (MemoryBlock block in rented)
        {
            pool.Return(block);
        }

        int releasedElsewhere = -1;
        var other = new Thread(() => releasedElsewhere = pool.ReleaseFreeSlabs());
        other.Start();
        other.Join();
        releasedElsewhere.ShouldBe(0);
        pool.BytesReserved.ShouldBe(SlabMemoryPool.SlabSize);

        pool.ReleaseFreeSlabs().ShouldBe(1);
        pool.BytesReserved.ShouldBe(0);

        // Renting goes on from a fresh slab.
        MemoryBlock next = pool.Rent();
        rented.ShouldNotContain(next);
        pool.Return(next);
    });

    [Fact(Timeout = Timeout)]
    public async Task Asked_from_another_thread_an_owned_pool_releases_on_its_owner_thread_with_the_owner_s_blocks()
    {
        using var work = new System.Collections.Concurrent.BlockingCollection<IThreadPoolWorkItem>();
        var owner = new Thread(() =>
        {
            foreach (IThreadPoolWorkItem item in work.GetConsumingEnumerable())
            {
                item.Execute();
            }
        });
        var created = new TaskCompletionSource<SlabMemoryPool>(TaskCreationOptions.RunContinuationsAsynchronously);
        var pool = new SlabMemoryPool("release-scheduled", trackLeaks: false, owner.ManagedThreadId) { OwnerScheduler = work.Add };
        owner.Start();

        // Rented and returned on the owner: the blocks wait in the owner's own stack.
        work.Add(new Run(() =>
        {
            var blocks = new List<MemoryBlock>();
            for (int i = 0; i < 20; i++)
            {
                blocks.Add(pool.Rent());
            }

            blocks.ForEach(pool.Return);
            created.SetResult(pool);
        }));
        await created.Task.WaitAsync(TimeSpan.FromSeconds(10));

        pool.ReleaseFreeSlabs().ShouldBe(0);
        for (int i = 0; i < 1_000 && pool.SlabsReleased == 0; i++)
        {
            await Task.Delay(5);
        }

        pool.SlabsReleased.ShouldBe(1);
        pool.BytesReserved.ShouldBe(0);
        work.CompleteAdding();
        owner.Join();
        pool.Dispose();
    }

    [Fact]
    public void A_released_slab_is_garbage_the_collector_frees()
    {
        var pool = new SlabMemoryPool("release-collect", trackLeaks: false, SlabMemoryPool.NoOwnerThread);
        WeakReference slab = RentAndReturnOneSlab(pool);
        pool.ReleaseFreeSlabs().ShouldBe(1);

        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();

        slab.IsAlive.ShouldBeFalse("the pool, a block or a list still holds the released slab");
        pool.Dispose();
    }

    [Fact(Timeout = Timeout)]
    public Task Releasing_while_other_threads_rent_and_return_never_hands_out_a_block_twice() => SlabMemoryPoolTests.OnOwnThread(() =>
    {
        using var pool = new SlabMemoryPool("release-stress", trackLeaks: false, SlabMemoryPool.NoOwnerThread);
        var rentedNow = new System.Collections.Concurrent.ConcurrentDictionary<MemoryBlock, int>();
        var failures = new System.Collections.Concurrent.ConcurrentQueue<string>();
        using var stop = new CancellationTokenSource();
        var workers = new Thread[3];
        for (int w = 0; w < workers.Length; w++)
        {
            int marker = w + 1;
            workers[w] = new Thread(() =>
            {
                var held = new Queue<MemoryBlock>();
                var random = new Random(marker);
                for (int i = 0; i < 30_000; i++)
                {
                    if (held.Count < 40 && (held.Count == 0 || random.Next(2) == 0))
                    {
                        MemoryBlock block = pool.Rent();
                        if (!rentedNow.TryAdd(block, marker))
                        {
                            failures.Enqueue($"block #{block.Id} handed out twice");
                        }

                        if (block.Slab.Released)
                        {
                            failures.Enqueue($"block #{block.Id} handed out from a released slab");
                        }

                        held.Enqueue(block);
                    }
                    else
                    {
                        MemoryBlock block = held.Dequeue();
                        rentedNow.TryRemove(block, out _);
                        pool.Return(block);
                    }
                }

                while (held.TryDequeue(out MemoryBlock? block))
                {
                    rentedNow.TryRemove(block, out _);
                    pool.Return(block);
                }
            });
            workers[w].Start();
        }

        int released = 0;
        var releaser = new Thread(() =>
        {
            while (!stop.IsCancellationRequested)
            {
                released += pool.ReleaseFreeSlabs();
            }
        });
        releaser.Start();
        foreach (Thread worker in workers)
        {
            worker.Join();
        }

        stop.Cancel();
        releaser.Join();

        failures.ShouldBeEmpty();
        pool.BlocksOutstanding.ShouldBe(0);
        released += pool.ReleaseFreeSlabs();
        pool.BytesReserved.ShouldBe(0);
        pool.SlabsReleased.ShouldBe(pool.SlabsAllocated);
        released.ShouldBe((int)pool.SlabsAllocated);
    });

    [Fact]
    public void The_releaser_waits_for_the_idle_time_and_releases_again_while_a_pool_stays_idle()
    {
        using var busy = new SlabMemoryPool("releaser-busy", trackLeaks: false, SlabMemoryPool.NoOwnerThread);
        using var idle = new SlabMemoryPool("releaser-idle", trackLeaks: false, SlabMemoryPool.NoOwnerThread);
        busy.Return(busy.Rent());
        MemoryBlock held = idle.Rent();
        var releaser = new IdleSlabReleaser(new[] { busy, idle }, idleTicks: 10, now: 0);

        // The busy pool rents every tick; the idle one holds one block of its only slab.
        for (long now = 1; now <= 9; now++)
        {
            busy.Return(busy.Rent());
            releaser.OnTick(now).ShouldBe(0);
        }

        busy.Return(busy.Rent());
        releaser.OnTick(10).ShouldBe(0, "the idle pool's slab has a rented block");
        busy.BytesReserved.ShouldBe(SlabMemoryPool.SlabSize);

        // The block comes back without a rent: one idle time later its slab goes; the busy pool keeps its own.
        idle.Return(held);
        for (long now = 11; now < 20; now++)
        {
            busy.Return(busy.Rent());
            releaser.OnTick(now).ShouldBe(0);
        }

        busy.Return(busy.Rent());
        releaser.OnTick(20).ShouldBe(1);
        idle.BytesReserved.ShouldBe(0);
        busy.BytesReserved.ShouldBe(SlabMemoryPool.SlabSize);

        // Now the busy pool stops renting.
        releaser.OnTick(29).ShouldBe(0);
        releaser.OnTick(30).ShouldBe(1);
        busy.BytesReserved.ShouldBe(0);
    }

    private sealed class Run(Action action) : IThreadPoolWorkItem
    {
        public void Execute() => action();
    }

    private static WeakReference RentAndReturnOneSlab(SlabMemoryPool pool)
    {
        MemoryBlock block = pool.Rent();
        MemoryMarshal.TryGetArray<byte>(block.Memory, out ArraySegment<byte> segment).ShouldBeTrue();
        var slab = new WeakReference(segment.Array);
        pool.Return(block);
        return slab;
    }

    private static bool SameArray(MemoryBlock a, MemoryBlock b) =>
        MemoryMarshal.TryGetArray<byte>(a.Memory, out ArraySegment<byte> first)
        && MemoryMarshal.TryGetArray<byte>(b.Memory, out ArraySegment<byte> second)
        && ReferenceEquals(first.Array, second.Array);
}
