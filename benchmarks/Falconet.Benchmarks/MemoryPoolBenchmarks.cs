using System;
using System.Buffers;
using System.Threading;
using System.Threading.Tasks;
using BenchmarkDotNet.Attributes;
using Falconet.Buffers;

namespace Falconet.Benchmarks;

/// <summary>
/// Renting and returning one 4 KiB buffer: the slab pool on its owner thread (the libuv loop's path) and on its shared path
/// (a pool without an owner, the sockets transport's default), against <see cref="ArrayPool{T}.Shared"/> and
/// <c>new byte[4096]</c>. A connection rents a receive and a send block per request, so this is paid a few times per request.
/// </summary>
[MemoryDiagnoser]
public class MemoryPoolBenchmarks
{
    private const int Batch = 16;
    private readonly MemoryBlock[] _blocks = new MemoryBlock[Batch];
    private readonly byte[][] _arrays = new byte[Batch][];
    private SlabMemoryPool _owned = null!;
    private SlabMemoryPool _shared = null!;

    /// <summary>Creates the pools and warms them up to their working set.</summary>
    [GlobalSetup]
    public void Setup()
    {
        _owned = new SlabMemoryPool("bench-owned", trackLeaks: false, Environment.CurrentManagedThreadId);
        _shared = new SlabMemoryPool("bench-shared", trackLeaks: false, SlabMemoryPool.NoOwnerThread);
        OwnerThread();
        SharedPath();
        ArrayPoolShared();
    }

    /// <summary>Disposes the pools.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        _owned.Dispose();
        _shared.Dispose();
    }

    /// <summary>ArrayPool&lt;byte&gt;.Shared (the baseline).</summary>
    [Benchmark(Baseline = true, OperationsPerInvoke = Batch)]
    public int ArrayPoolShared()
    {
        for (int i = 0; i < Batch; i++)
        {
            _arrays[i] = ArrayPool<byte>.Shared.Rent(SlabMemoryPool.BlockSize);
        }

        int length = 0;
        for (int i = 0; i < Batch; i++)
        {
            length += _arrays[i].Length;
            ArrayPool<byte>.Shared.Return(_arrays[i]);
        }

        return length;
    }

    /// <summary>A new array each time (what a server without a pool does; the GC then pays for it).</summary>
    [Benchmark(OperationsPerInvoke = Batch)]
    public int NewArray()
    {
        int length = 0;
        for (int i = 0; i < Batch; i++)
        {
            _arrays[i] = new byte[SlabMemoryPool.BlockSize];
            length += _arrays[i].Length;
        }

        return length;
    }

    /// <summary>The slab pool on the thread that owns it: an intrusive stack, no interlocked operation.</summary>
    [Benchmark(OperationsPerInvoke = Batch)]
    public int OwnerThread() => RentAndReturn(_owned);

    /// <summary>The slab pool without an owner thread: every rent and return goes through its lock-free queue.</summary>
    [Benchmark(OperationsPerInvoke = Batch)]
    public int SharedPath() => RentAndReturn(_shared);

    private int RentAndReturn(SlabMemoryPool pool)
    {
        for (int i = 0; i < Batch; i++)
        {
            _blocks[i] = pool.Rent();
        }

        int length = 0;
        for (int i = 0; i < Batch; i++)
        {
            length += _blocks[i].Memory.Length;
            pool.Return(_blocks[i]);
        }

        return length;
    }
}

/// <summary>
/// Buffers rented on one thread and returned on another, the pattern of a handler that finishes on the thread pool, with two
/// threads doing it at once in opposite directions, 256 buffers each (a few hundred connections with a block in flight): the slab
/// pool's shared path against <see cref="ArrayPool{T}.Shared"/>.
/// </summary>
[MemoryDiagnoser]
public class CrossThreadPoolBenchmarks
{
    private const int PerThread = 256;
    private SlabMemoryPool _pool = null!;
    private MemoryBlock[] _left = null!;
    private MemoryBlock[] _right = null!;
    private byte[][] _leftArrays = null!;
    private byte[][] _rightArrays = null!;

    /// <summary>Creates the pool and the hand-over arrays.</summary>
    [GlobalSetup]
    public void Setup()
    {
        _pool = new SlabMemoryPool("bench-cross", trackLeaks: false, SlabMemoryPool.NoOwnerThread);
        _left = new MemoryBlock[PerThread];
        _right = new MemoryBlock[PerThread];
        _leftArrays = new byte[PerThread][];
        _rightArrays = new byte[PerThread][];
        SlabPool();
        ArrayPoolShared();
    }

    /// <summary>Disposes the pool.</summary>
    [GlobalCleanup]
    public void Cleanup() => _pool.Dispose();

    /// <summary>ArrayPool&lt;byte&gt;.Shared (the baseline).</summary>
    [Benchmark(Baseline = true, OperationsPerInvoke = 2 * PerThread)]
    public void ArrayPoolShared()
    {
        for (int i = 0; i < PerThread; i++)
        {
            _leftArrays[i] = ArrayPool<byte>.Shared.Rent(SlabMemoryPool.BlockSize);
            _rightArrays[i] = ArrayPool<byte>.Shared.Rent(SlabMemoryPool.BlockSize);
        }

        // Each side returns what the other rented, while the other does the same.
        Parallel.Invoke(
            () => ReturnAll(_rightArrays),
            () => ReturnAll(_leftArrays));

        static void ReturnAll(byte[][] arrays)
        {
            foreach (byte[] array in arrays)
            {
                ArrayPool<byte>.Shared.Return(array);
            }
        }
    }

    /// <summary>The slab pool's shared path.</summary>
    [Benchmark(OperationsPerInvoke = 2 * PerThread)]
    public void SlabPool()
    {
        for (int i = 0; i < PerThread; i++)
        {
            _left[i] = _pool.Rent();
            _right[i] = _pool.Rent();
        }

        Parallel.Invoke(
            () => ReturnAll(_pool, _right),
            () => ReturnAll(_pool, _left));

        static void ReturnAll(SlabMemoryPool pool, MemoryBlock[] blocks)
        {
            foreach (MemoryBlock block in blocks)
            {
                pool.Return(block);
            }
        }
    }
}
