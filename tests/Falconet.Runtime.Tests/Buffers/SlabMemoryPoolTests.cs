using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Shouldly;

namespace Falconet.Runtime.Tests.Buffers;

public sealed class SlabMemoryPoolTests
{
    private const int Timeout = 20_000;

    [Fact(Timeout = Timeout)]
    public Task Rent_returns_empty_page_aligned_4096_byte_blocks_backed_by_pinned_arrays() => OnOwnThread(() =>
    {
        using var pool = new SlabMemoryPool("aligned");
        var blocks = new List<MemoryBlock>();
        var seen = new HashSet<nint>();
        for (int i = 0; i < 200; i++)
        {
            MemoryBlock block = pool.Rent();
            blocks.Add(block);
            block.Memory.Length.ShouldBe(SlabMemoryPool.BlockSize);
            block.Start.ShouldBe(0);
            block.End.ShouldBe(0);
            MemoryMarshal.TryGetArray<byte>(block.Memory, out ArraySegment<byte> segment).ShouldBeTrue();
            segment.Array!.Length.ShouldBe(SlabMemoryPool.SlabSize);
            nint address = AddressOf(block);
            (address % SlabMemoryPool.BlockSize).ShouldBe(0);
            seen.Add(address).ShouldBeTrue("two rented blocks share memory");
        }

        // 200 blocks need 7 slabs of 32 blocks, or of 31 when a slab is not page-aligned: never more.
        pool.SlabsAllocated.ShouldBeInRange(7, 7);
        pool.BlocksOutstanding.ShouldBe(200);
        foreach (MemoryBlock block in blocks)
        {
            pool.Return(block);
        }

        pool.BlocksOutstanding.ShouldBe(0);
    });

    [Fact(Timeout = Timeout)]
    public Task Blocks_returned_on_the_owner_thread_are_rented_again_without_a_new_slab() => OnOwnThread(() =>
    {
        using var pool = new SlabMemoryPool("owner");
        var first = new HashSet<MemoryBlock>();
        for (int i = 0; i < 20; i++)
        {
            first.Add(pool.Rent());
        }

        foreach (MemoryBlock block in first)
        {
            pool.Return(block);
        }

        for (int i = 0; i < 20; i++)
        {
            MemoryBlock block = pool.Rent();
            first.ShouldContain(block);
            pool.Return(block);
        }

        pool.SlabsAllocated.ShouldBe(1);
        pool.BlocksRented.ShouldBe(40);
    });

    [Fact(Timeout = Timeout)]
    public Task Blocks_returned_from_other_threads_come_back_into_circulation_on_the_owner() => OnOwnThread(() =>
    {
        using var pool = new SlabMemoryPool("cross-thread");
        const int Count = 62; // at most two slabs, aligned or not
        var rented = new MemoryBlock[Count];
        for (int i = 0; i < Count; i++)
        {
            rented[i] = pool.Rent();
        }

        long slabs = pool.SlabsAllocated;
        var other = new Thread(() =>
        {
            foreach (MemoryBlock block in rented)
            {
                pool.Return(block);
            }
        });
        other.Start();
        other.Join();
        pool.BlocksOutstanding.ShouldBe(0);

        var again = new HashSet<MemoryBlock>();
        for (int i = 0; i < Count; i++)
        {
            again.Add(pool.Rent());
        }

        pool.SlabsAllocated.ShouldBe(slabs);
        again.ShouldBe(rented, ignoreOrder: true);
        foreach (MemoryBlock block in again)
        {
            pool.Return(block);
        }
    });

    [Fact(Timeout = Timeout)]
    public Task Concurrent_rent_and_return_on_many_threads_never_hands_out_a_block_twice() => OnOwnThread(() =>
    {
        using var pool = new SlabMemoryPool("stress");
        var failures = new List<string>();
        void Work(int marker)
        {
            var held = new Queue<MemoryBlock>();
            var random = new Random(marker);
            for (int i = 0; i < 20_000; i++)
            {
                if (held.Count < 8 && (held.Count == 0 || random.Next(2) == 0))
                {
                    MemoryBlock block = pool.Rent();
                    block.Memory.Span.Fill((byte)marker);
                    held.Enqueue(block);
                }
                else
                {
                    MemoryBlock block = held.Dequeue();
                    if (block.Memory.Span.IndexOfAnyExcept((byte)marker) >= 0)
                    {
                        lock (failures)
                        {
                            failures.Add($"block #{block.Id} was written by another holder");
                        }
                    }

                    pool.Return(block);
                }
            }

            while (held.Count > 0)
            {
                pool.Return(held.Dequeue());
            }
        }

        var threads = new Thread[3];
        for (int t = 0; t < threads.Length; t++)
        {
            int marker = t + 1;
            threads[t] = new Thread(() => Work(marker));
            threads[t].Start();
        }

        Work(100); // the owner takes part through its fast path
        foreach (Thread thread in threads)
        {
            thread.Join();
        }

        failures.ShouldBeEmpty();
        pool.BlocksOutstanding.ShouldBe(0);
        pool.BlocksRented.ShouldBeGreaterThanOrEqualTo(4 * 10_000, "every thread rents at least half of its steps");
    });

    [Fact(Timeout = Timeout)]
    public Task Return_of_a_returned_block_throws_and_names_the_method_that_rented_it() => OnOwnThread(() =>
    {
        using var pool = new SlabMemoryPool("double", trackLeaks: true);
        MemoryBlock block = RentInRequestParser(pool);
        pool.Return(block);

        var error = Should.Throw<Exception>(() => pool.Return(block)).ShouldBeOfType<InvalidOperationException>();

        error.Message.ShouldContain("Double return", Case.Sensitive);
        error.Message.ShouldContain(nameof(RentInRequestParser), Case.Sensitive);
        error.Message.ShouldContain("'double'", Case.Sensitive);
        pool.BlocksOutstanding.ShouldBe(0);
    });

    [Fact(Timeout = Timeout)]
    public Task Return_of_a_returned_block_throws_without_tracking_and_says_how_to_see_the_renter() => OnOwnThread(() =>
    {
        using var pool = new SlabMemoryPool("double-untracked");
        MemoryBlock block = pool.Rent();
        pool.Return(block);

        var error = Should.Throw<Exception>(() => pool.Return(block)).ShouldBeOfType<InvalidOperationException>();

        error.Message.ShouldContain("trackLeaks", Case.Sensitive);
        pool.BlocksOutstanding.ShouldBe(0);
    });

    [Fact(Timeout = Timeout)]
    public Task Return_of_a_block_of_another_pool_throws() => OnOwnThread(() =>
    {
        using var mine = new SlabMemoryPool("mine");
        using var theirs = new SlabMemoryPool("theirs");
        MemoryBlock block = theirs.Rent();

        Should.Throw<Exception>(() => mine.Return(block)).ShouldBeOfType<ArgumentException>();

        theirs.Return(block);
    });

    [Fact(Timeout = Timeout)]
    public Task Leak_report_lists_every_outstanding_block_with_its_renting_stack() => OnOwnThread(() =>
    {
        using var pool = new SlabMemoryPool("leaky", trackLeaks: true);
        MemoryBlock kept1 = RentInRequestParser(pool);
        MemoryBlock kept2 = RentInResponseWriter(pool);
        pool.Return(pool.Rent());

        string report = pool.GetLeakReport();

        report.ShouldContain("2 block(s)", Case.Sensitive);
        report.ShouldContain(nameof(RentInRequestParser), Case.Sensitive);
        report.ShouldContain(nameof(RentInResponseWriter), Case.Sensitive);
        pool.Return(kept1);
        pool.Return(kept2);
        pool.GetLeakReport().ShouldContain("0 block(s)", Case.Sensitive);
    });

    [Fact(Timeout = Timeout)]
    public async Task WaitForAllReturnedAsync_completes_once_another_thread_returns_the_last_block()
    {
        using var pool = new SlabMemoryPool("wait");
        MemoryBlock block = pool.Rent();
        Task returner = Task.Run(async () =>
        {
            await Task.Delay(100);
            pool.Return(block);
        });

        await pool.WaitForAllReturnedAsync(TimeSpan.FromSeconds(10));

        pool.BlocksOutstanding.ShouldBe(0);
        await returner;
    }

    [Fact(Timeout = Timeout)]
    public async Task WaitForAllReturnedAsync_throws_a_leak_report_naming_the_renter_after_the_timeout()
    {
        using var pool = new SlabMemoryPool("wait-leak", trackLeaks: true);
        MemoryBlock leaked = RentInRequestParser(pool);
        long started = Environment.TickCount64;

        var error = await Should.ThrowAsync<PoolLeakException>(() => pool.WaitForAllReturnedAsync(TimeSpan.FromMilliseconds(150)).AsTask());

        (Environment.TickCount64 - started).ShouldBeGreaterThanOrEqualTo(140, "gave up before the timeout");
        error.BlocksOutstanding.ShouldBe(1);
        error.PoolName.ShouldBe("wait-leak");
        error.Report.ShouldContain(nameof(RentInRequestParser), Case.Sensitive);
        pool.Return(leaked);
    }

    [Fact(Timeout = Timeout)]
    public Task Rent_after_dispose_throws_but_blocks_still_out_can_come_back() => OnOwnThread(() =>
    {
        var pool = new SlabMemoryPool("disposed");
        MemoryBlock block = pool.Rent();
        pool.Dispose();

        Should.Throw<ObjectDisposedException>(() => pool.Rent());
        pool.Return(block);
        pool.BlocksOutstanding.ShouldBe(0);
    });

    [Fact(Timeout = Timeout)]
    public Task Rent_and_return_on_the_owner_thread_allocate_nothing_after_warm_up() => OnOwnThread(() =>
    {
        using var pool = new SlabMemoryPool("zero-alloc-owner");
        MemoryBlock[] held = new MemoryBlock[4];
        RentReturnPairs(pool, held, 1_000);

        AllocatedInQuietestWindow(pool, held).ShouldBe(0);
    });

    [Fact(Timeout = Timeout)]
    public async Task Rent_and_return_on_another_thread_allocate_nothing_after_warm_up()
    {
        using var pool = new SlabMemoryPool("zero-alloc-foreign", trackLeaks: false, ownerThreadId: -1);
        long allocated = await OnOwnThread(() =>
        {
            MemoryBlock[] held = new MemoryBlock[4];
            RentReturnPairs(pool, held, 1_000);
            return AllocatedInQuietestWindow(pool, held);
        });

        allocated.ShouldBe(0);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static MemoryBlock RentInRequestParser(SlabMemoryPool pool) => pool.Rent();

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static MemoryBlock RentInResponseWriter(SlabMemoryPool pool) => pool.Rent();

    // Bytes this thread allocated over 10,000 rent-and-return pairs, in the quietest of up to three windows: an allocation
    // of the pool's shows in every window (at least one object per pair), while the runtime's own (a method moving to its
    // optimized tier while the machine is busy, seen once as 496 B) comes once.
    private static long AllocatedInQuietestWindow(SlabMemoryPool pool, MemoryBlock[] held)
    {
        long least = long.MaxValue;
        for (int window = 0; window < 3 && least > 0; window++)
        {
            long before = GC.GetAllocatedBytesForCurrentThread();
            RentReturnPairs(pool, held, 10_000);
            least = Math.Min(least, GC.GetAllocatedBytesForCurrentThread() - before);
        }

        return least;
    }

    private static void RentReturnPairs(SlabMemoryPool pool, MemoryBlock[] held, int pairs)
    {
        for (int i = 0; i < pairs; i += held.Length)
        {
            for (int j = 0; j < held.Length; j++)
            {
                held[j] = pool.Rent();
            }

            for (int j = 0; j < held.Length; j++)
            {
                pool.Return(held[j]);
            }
        }
    }

    private static unsafe nint AddressOf(MemoryBlock block)
    {
        fixed (byte* p = block.Memory.Span)
        {
            return (nint)p;
        }
    }

    /// <summary>Runs a synchronous test body on a thread of its own, so that the pool it creates is owned by one known thread.</summary>
    internal static Task OnOwnThread(Action body) => OnOwnThread(() =>
    {
        body();
        return 0L;
    });

    internal static Task<T> OnOwnThread<T>(Func<T> body)
    {
        var completion = new TaskCompletionSource<T>(TaskCreationOptions.RunContinuationsAsynchronously);
        var thread = new Thread(() =>
        {
            try
            {
                completion.SetResult(body());
            }
            catch (Exception e)
            {
                completion.SetException(e);
            }
        });
        thread.Start();
        return completion.Task;
    }
}
