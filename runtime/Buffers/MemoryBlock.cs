using System;
using System.Buffers;
using System.Diagnostics;

namespace Falconet.Buffers;

/// <summary>A 4 KiB page-aligned slice of a pinned slab, rented from a <see cref="SlabMemoryPool"/> and chainable into a <see cref="ReadOnlySequence{T}"/>.</summary>
/// <remarks>
/// <see cref="Memory"/> is the whole block; <see cref="Start"/> and <see cref="End"/> delimit the data written
/// into it. The base <see cref="ReadOnlySequenceSegment{T}.Memory"/> is the data window that a sequence built by
/// <see cref="BlockChain.GetSequence"/> sees.
/// </remarks>
public sealed class MemoryBlock : ReadOnlySequenceSegment<byte>
{
    private const int Free = 0;
    private const int Rented = 1;

    private readonly Memory<byte> _memory;
    private readonly byte[] _array;
    private readonly int _offset;
    private MemoryBlock? _nextBlock;
    private int _state;

    /// <summary>Start of the data window, an offset into <see cref="Memory"/>.</summary>
    public int Start;

    /// <summary>End of the data window (exclusive), an offset into <see cref="Memory"/>.</summary>
    public int End;

    internal MemoryBlock(SlabMemoryPool pool, SlabMemoryPool.Slab slab, byte[] array, int offset, int id)
    {
        Pool = pool;
        Slab = slab;
        _memory = new Memory<byte>(array, offset, SlabMemoryPool.BlockSize);
        _array = array;
        _offset = offset;
        Id = id;
    }

    /// <summary>The pool this block belongs to and must return to.</summary>
    public SlabMemoryPool Pool { get; }

    /// <summary>The whole block, <see cref="SlabMemoryPool.BlockSize"/> bytes, backed by a pinned array.</summary>
    public new Memory<byte> Memory => _memory;

    /// <summary>The next block of a chain, also exposed to sequences as <see cref="ReadOnlySequenceSegment{T}.Next"/>.</summary>
    public MemoryBlock? NextBlock
    {
        get => _nextBlock;
        set
        {
            _nextBlock = value;
            Next = value;
        }
    }

    /// <summary>The free space after the data, <c>[End, BlockSize)</c>.</summary>
    /// <remarks>Made from the array directly: <see cref="Memory{T}.Span"/> costs a type test and a few checks more, on every write.</remarks>
    public Span<byte> Writable => new(_array, _offset + End, SlabMemoryPool.BlockSize - End);

    /// <summary>The free space after the data as memory, <c>[End, BlockSize)</c>.</summary>
    public Memory<byte> WritableMemory => _memory.Slice(End);

    /// <summary>The data written into the block, <c>[Start, End)</c>.</summary>
    public ReadOnlyMemory<byte> Data => _memory.Slice(Start, End - Start);

    /// <summary>The data written into the block as a span, <c>[Start, End)</c>.</summary>
    public ReadOnlySpan<byte> DataSpan => new(_array, _offset + Start, End - Start);

    /// <summary>Number of data bytes, <c>End - Start</c>.</summary>
    public int Length => End - Start;

    /// <summary>The slab the block was cut from.</summary>
    internal SlabMemoryPool.Slab Slab { get; }

    /// <summary>A number unique within the pool, used by diagnostics.</summary>
    internal int Id { get; }

    /// <summary>Next free block of the owner's stack (intrusive, so the stack never allocates).</summary>
    internal MemoryBlock? NextFree { get; set; }

    /// <summary>Where the block was rented, captured only when the pool tracks leaks.</summary>
    internal StackTrace? RentedAt { get; private set; }

    /// <summary>Managed thread id that rented the block.</summary>
    internal int RentedBy { get; private set; }

    internal bool IsRented => System.Threading.Volatile.Read(ref _state) == Rented;

    /// <summary>Prepares the block as a sequence segment whose memory is the current data window.</summary>
    internal void PrepareSegment(long runningIndex)
    {
        base.Memory = Data;
        RunningIndex = runningIndex;
    }

    /// <summary>Marks the block rented; it came off a free list, so nobody else can touch it.</summary>
    internal void OnRent(bool trackLeaks)
    {
        Start = 0;
        End = 0;
        NextBlock = null;
        base.Memory = default;
        RunningIndex = 0;
        RentedBy = Environment.CurrentManagedThreadId;
        RentedAt = trackLeaks ? new StackTrace(1, fNeedFileInfo: true) : null;
        System.Threading.Volatile.Write(ref _state, Rented);
    }

    /// <summary>Marks the block free; false when it already was (a double return).</summary>
    internal bool TryMarkReturned()
    {
        if (System.Threading.Interlocked.Exchange(ref _state, Free) != Rented)
        {
            return false;
        }

        NextBlock = null;
        base.Memory = default;
        return true;
    }

    /// <summary>Describes the block and who rented it, for leak and double-return reports.</summary>
    internal string Describe()
    {
        string where = RentedAt is null
            ? "   (renting stack not captured: create the pool with trackLeaks: true)"
            : RentedAt.ToString().TrimEnd();
        return $"block #{Id} of pool '{Pool.Name}' rented by thread {RentedBy} at:{Environment.NewLine}{where}";
    }
}
