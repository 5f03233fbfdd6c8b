using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace Falconet.Buffers;

/// <summary>A pool of page-aligned 4 KiB blocks cut from 128 KiB slabs pinned on the pinned object heap, owned by one thread or by none.</summary>
/// <remarks>
/// <para>
/// The owner thread rents and returns through an intrusive stack with no lock and no atomic read-modify-write
/// besides the block's own state flag. Other threads return through a lock-free queue that the owner drains
/// when its stack runs dry, and rent from that queue. A slab is cut only when both are empty. A pool owned by no
/// thread (<see cref="NoOwnerThread"/>) uses the queue alone.
/// </para>
/// <para>
/// Memory is given back by <see cref="ReleaseFreeSlabs"/>, which something outside the rent and return paths calls
/// when the pool has been idle (the server's heartbeat, through <see cref="IdleSlabReleaser"/>): a slab whose every
/// block is free is dropped, and the garbage collector frees it.
/// </para>
/// </remarks>
public sealed class SlabMemoryPool : IDisposable
{
    /// <summary>The owner id of a pool that no thread owns (managed thread ids start at 1).</summary>
    public const int NoOwnerThread = 0;

    /// <summary>Size of one block in bytes; blocks start on a 4096-byte address boundary.</summary>
    public const int BlockSize = 4096;

    /// <summary>Size of one slab in bytes; a slab yields 32 blocks, or 31 when its start is not page-aligned.</summary>
    public const int SlabSize = 128 * 1024;

    /// <summary>Free blocks the owner keeps to itself; above this its returns feed the shared queue, so renters on other threads find them.</summary>
    internal const int OwnerStackLimit = 2 * (SlabSize / BlockSize);

    private readonly ConcurrentQueue<MemoryBlock> _shared = new();
    private readonly object _slabLock = new();
    private readonly List<Slab> _liveSlabs = new();
    private readonly int _ownerThreadId;
    private int _nextBlockId;
    private int _releasePass;
    private ReleaseOnOwner? _releaseOnOwner;

    // Owner-thread state: written only by the owner thread.
    private MemoryBlock? _ownerFree;
    private int _ownerFreeCount;
    private long _ownerRents;
    private long _ownerReturns;

    // Written by any thread with Interlocked.
    private long _foreignRents;
    private long _foreignReturns;
    private long _slabs;
    private long _slabsReleased;

    private volatile bool _disposed;

    /// <summary>Creates a pool owned by the calling thread.</summary>
    /// <param name="name">Name used in diagnostics and as the <c>falconet.pool</c> metric tag.</param>
    /// <param name="trackLeaks">Capture the renting stack of every block, for leak and double-return reports (slow; for tests).</param>
    public SlabMemoryPool(string name = "falconet", bool trackLeaks = false)
        : this(name, trackLeaks, Environment.CurrentManagedThreadId)
    {
    }

    /// <summary>
    /// Creates a pool owned by the thread with the given managed id (an I/O thread created but not yet started), or
    /// by no thread with <see cref="NoOwnerThread"/>: then every thread rents and returns through the shared queue.
    /// </summary>
    public SlabMemoryPool(string name, bool trackLeaks, int ownerThreadId)
    {
        ArgumentNullException.ThrowIfNull(name);
        Name = name;
        TrackLeaks = trackLeaks;
        _ownerThreadId = ownerThreadId;
        BufferMetrics.Register(this);
    }

    /// <summary>Name used in diagnostics and metrics.</summary>
    public string Name { get; }

    /// <summary>True when renting captures stack traces for leak reports.</summary>
    public bool TrackLeaks { get; }

    /// <summary>Managed id of the thread whose rent and return take the lock-free fast path.</summary>
    public int OwnerThreadId => _ownerThreadId;

    /// <summary>
    /// Runs work on the owner thread (its loop's or lane's queue), so that <see cref="ReleaseFreeSlabs"/> called elsewhere
    /// can count the blocks in the owner's own stack; null when the pool has no owner or nobody set it.
    /// </summary>
    internal Action<IThreadPoolWorkItem>? OwnerScheduler { get; init; }

    /// <summary>Blocks rented and not yet returned.</summary>
    public long BlocksOutstanding
    {
        get
        {
            // Returns are read before rents, so a rent and return racing with this read can only over-count.
            long returns = Volatile.Read(ref _ownerReturns) + Interlocked.Read(ref _foreignReturns);
            long rents = Volatile.Read(ref _ownerRents) + Interlocked.Read(ref _foreignRents);
            return rents - returns;
        }
    }

    /// <summary>Total number of rents since the pool was created.</summary>
    public long BlocksRented => Volatile.Read(ref _ownerRents) + Interlocked.Read(ref _foreignRents);

    /// <summary>Rents made off the owner thread, through the shared path (all of them for a pool without an owner thread).</summary>
    public long BlocksRentedOffOwner => Interlocked.Read(ref _foreignRents);

    /// <summary>Number of slabs allocated since the pool was created.</summary>
    public long SlabsAllocated => Interlocked.Read(ref _slabs);

    /// <summary>Number of slabs given back (left to the garbage collector) since the pool was created.</summary>
    public long SlabsReleased => Interlocked.Read(ref _slabsReleased);

    /// <summary>Bytes of slabs the pool holds now, free blocks and rented ones.</summary>
    public long BytesReserved => (SlabsAllocated - SlabsReleased) * SlabSize;

    /// <summary>Rents a block with an empty data window; any thread may call it, the owner thread takes the fast path.</summary>
    public MemoryBlock Rent()
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        if (Environment.CurrentManagedThreadId != _ownerThreadId)
        {
            return RentOnOtherThread();
        }

        MemoryBlock? block = _ownerFree;
        if (block is null)
        {
            block = RefillOnOwnerThread();
        }
        else
        {
            _ownerFree = block.NextFree;
            _ownerFreeCount--;
        }

        block.NextFree = null;
        _ownerRents++;
        block.OnRent(TrackLeaks);
        return block;
    }

    /// <summary>Returns a block; any thread may call it. Throws <see cref="InvalidOperationException"/> on a double return, naming the renter.</summary>
    public void Return(MemoryBlock block)
    {
        ArgumentNullException.ThrowIfNull(block);
        if (!ReferenceEquals(block.Pool, this))
        {
            ThrowForeignBlock(block);
        }

        if (!block.TryMarkReturned())
        {
            ThrowDoubleReturn(block);
        }

        if (Environment.CurrentManagedThreadId == _ownerThreadId)
        {
            _ownerReturns++;
            if (_ownerFreeCount < OwnerStackLimit)
            {
                block.NextFree = _ownerFree;
                _ownerFree = block;
                _ownerFreeCount++;
                return;
            }
        }
        else
        {
            Interlocked.Increment(ref _foreignReturns);
        }

        _shared.Enqueue(block);
    }

    /// <summary>Waits until every rented block is back; throws <see cref="PoolLeakException"/> with a leak report after the timeout.</summary>
    public async ValueTask WaitForAllReturnedAsync(TimeSpan timeout)
    {
        long deadline = Environment.TickCount64 + (long)timeout.TotalMilliseconds;
        while (BlocksOutstanding != 0)
        {
            if (Environment.TickCount64 >= deadline)
            {
                long outstanding = BlocksOutstanding;
                if (outstanding == 0)
                {
                    return;
                }

                throw new PoolLeakException(Name, outstanding, GetLeakReport());
            }

            await Task.Delay(5).ConfigureAwait(false);
        }
    }

    /// <summary>Describes every block currently rented, with its renting stack when the pool tracks leaks.</summary>
    public string GetLeakReport()
    {
        var report = new StringBuilder();
        int count = 0;
        lock (_slabLock)
        {
            foreach (Slab slab in _liveSlabs)
            {
                foreach (MemoryBlock block in slab.Blocks)
                {
                    if (block.IsRented)
                    {
                        count++;
                        report.AppendLine(block.Describe());
                    }
                }
            }
        }

        return $"{count} block(s) of pool '{Name}' not returned:{Environment.NewLine}{report}";
    }

    /// <summary>Stops renting (rent throws) and removes the pool from metrics; blocks still out may be returned and waited for.</summary>
    public void Dispose()
    {
        if (_disposed)
        {
            return;
        }

        _disposed = true;
        BufferMetrics.Unregister(this);
    }

    /// <summary>
    /// Gives back every slab whose blocks are all free: they leave the pool, and the garbage collector frees the slab.
    /// Returns how many were released. Called off the rent and return paths (the server's heartbeat does it once the pool
    /// has been idle); renting and returning may go on meanwhile on any thread, and only ever keep a slab.
    /// </summary>
    /// <remarks>
    /// A free block counts when it waits in the shared queue. Called on the owner thread, the owner's stack is moved to
    /// the queue first. Called elsewhere on a pool with an <see cref="OwnerScheduler"/>, the release is handed to the owner
    /// thread and this returns 0 (<see cref="SlabsReleased"/> shows it once done); without one, the slabs of the blocks
    /// in the owner's stack (at most 64) are kept.
    /// </remarks>
    public int ReleaseFreeSlabs()
    {
        if (_ownerThreadId != NoOwnerThread && Environment.CurrentManagedThreadId != _ownerThreadId && OwnerScheduler is { } schedule)
        {
            schedule(_releaseOnOwner ??= new ReleaseOnOwner(this));
            return 0;
        }

        return ReleaseFreeSlabsHere();
    }

    /// <summary>The release itself, on whatever thread calls it (the owner's stack counts only on the owner thread).</summary>
    private int ReleaseFreeSlabsHere()
    {
        if (_disposed)
        {
            return 0;
        }

        if (Environment.CurrentManagedThreadId == _ownerThreadId)
        {
            while (_ownerFree is { } block)
            {
                _ownerFree = block.NextFree;
                block.NextFree = null;
                _shared.Enqueue(block);
            }

            _ownerFreeCount = 0;
        }

        lock (_slabLock)
        {
            if (_liveSlabs.Count == 0)
            {
                return 0;
            }

            // Every free block leaves the queue for a moment; a rent that finds it empty meanwhile cuts a slab, a return
            // meanwhile keeps its slab: neither is ever wrong, and an idle pool sees neither.
            int pass = ++_releasePass;
            var free = new List<MemoryBlock>();
            while (_shared.TryDequeue(out MemoryBlock? block))
            {
                free.Add(block);
                block.Slab.CountFree(pass);
            }

            int released = _liveSlabs.RemoveAll(static slab => slab.TryRelease());
            foreach (MemoryBlock block in free)
            {
                if (!block.Slab.IsAllFree)
                {
                    _shared.Enqueue(block);
                }
            }

            Interlocked.Add(ref _slabsReleased, released);
            return released;
        }
    }

    private MemoryBlock RefillOnOwnerThread()
    {
        // Blocks returned by other threads come back into circulation before a new slab is cut.
        MemoryBlock? first = null;
        while (_ownerFreeCount < OwnerStackLimit && _shared.TryDequeue(out MemoryBlock? returned))
        {
            if (first is null)
            {
                first = returned;
            }
            else
            {
                returned.NextFree = _ownerFree;
                _ownerFree = returned;
                _ownerFreeCount++;
            }
        }

        return first ?? AllocateSlab(onOwnerThread: true);
    }

    private MemoryBlock RentOnOtherThread()
    {
        if (!_shared.TryDequeue(out MemoryBlock? block))
        {
            block = AllocateSlab(onOwnerThread: false);
        }

        Interlocked.Increment(ref _foreignRents);
        block.OnRent(TrackLeaks);
        return block;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private MemoryBlock AllocateSlab(bool onOwnerThread)
    {
        byte[] array = GC.AllocateUninitializedArray<byte>(SlabSize, pinned: true);
        int offset = AlignmentOffset(array);
        int count = (SlabSize - offset) / BlockSize;
        MemoryBlock first;
        lock (_slabLock)
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            var slab = new Slab(count);
            _liveSlabs.Add(slab);
            first = new MemoryBlock(this, slab, array, offset, _nextBlockId++);
            slab.Blocks[0] = first;
            for (int i = 1; i < count; i++)
            {
                var block = new MemoryBlock(this, slab, array, offset + (i * BlockSize), _nextBlockId++);
                slab.Blocks[i] = block;
                if (onOwnerThread)
                {
                    block.NextFree = _ownerFree;
                    _ownerFree = block;
                    _ownerFreeCount++;
                }
                else
                {
                    _shared.Enqueue(block);
                }
            }

            Interlocked.Increment(ref _slabs);
        }

        return first;
    }

    /// <summary>Bytes to skip from the start of the slab so that the first block starts on a page boundary.</summary>
    private static unsafe int AlignmentOffset(byte[] slab)
    {
        nuint address = (nuint)Unsafe.AsPointer(ref MemoryMarshal.GetArrayDataReference(slab));
        return (int)((BlockSize - (address & (BlockSize - 1))) & (BlockSize - 1));
    }

    /// <summary>A release handed to the owner thread; run elsewhere (the owner has stopped) it releases what it can there.</summary>
    private sealed class ReleaseOnOwner(SlabMemoryPool pool) : IThreadPoolWorkItem
    {
        public void Execute() => pool.ReleaseFreeSlabsHere();
    }

    /// <summary>One pinned array and the blocks cut from it; released as a whole once every block is free.</summary>
    internal sealed class Slab(int blockCount)
    {
        private int _pass;
        private int _free;

        public MemoryBlock[] Blocks { get; } = new MemoryBlock[blockCount];

        /// <summary>True when the release pass under way found every block of the slab free.</summary>
        public bool IsAllFree => _free == Blocks.Length;

        /// <summary>True once the slab has left the pool; none of its blocks is ever rented again.</summary>
        public bool Released { get; private set; }

        /// <summary>Marks the slab released when the pass under way found every block free.</summary>
        public bool TryRelease() => Released = IsAllFree;

        /// <summary>Counts one free block seen by release pass <paramref name="pass"/>.</summary>
        public void CountFree(int pass)
        {
            if (_pass != pass)
            {
                _pass = pass;
                _free = 0;
            }

            _free++;
        }
    }

    private void ThrowForeignBlock(MemoryBlock block) =>
        throw new ArgumentException($"Block #{block.Id} belongs to pool '{block.Pool.Name}', not to pool '{Name}'.", nameof(block));

    private static void ThrowDoubleReturn(MemoryBlock block) =>
        throw new InvalidOperationException($"Double return of {block.Describe()}");
}
