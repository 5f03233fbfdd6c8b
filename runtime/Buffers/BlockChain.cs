using System;
using System.Buffers;
using System.Runtime.CompilerServices;

namespace Falconet.Buffers;

/// <summary>A queue of pool blocks: bytes are appended at the tail and consumed from the head, and the whole content reads as a <see cref="ReadOnlySequence{T}"/> without a copy.</summary>
/// <remarks>Not thread-safe: one reader and writer at a time, as on a connection.</remarks>
public sealed class BlockChain : IBufferWriter<byte>, IDisposable
{
    private readonly SlabMemoryPool _pool;
    private MemoryBlock? _head;
    private MemoryBlock? _tail;
    private long _length;

    /// <summary>Creates an empty chain that rents its blocks from <paramref name="pool"/>.</summary>
    public BlockChain(SlabMemoryPool pool)
    {
        ArgumentNullException.ThrowIfNull(pool);
        _pool = pool;
    }

    /// <summary>The pool the blocks come from and go back to.</summary>
    public SlabMemoryPool Pool => _pool;

    /// <summary>Number of buffered (appended and not consumed) bytes.</summary>
    public long Length => _length;

    /// <summary>True when nothing is buffered.</summary>
    public bool IsEmpty => _length == 0;

    /// <summary>The first block, or null when the chain holds none.</summary>
    public MemoryBlock? Head => _head;

    /// <summary>Returns the tail block's free space, renting a new tail block when it has fewer than <paramref name="sizeHint"/> bytes free.</summary>
    public Memory<byte> GetWritableMemory(int sizeHint = 1)
    {
        return EnsureTail(sizeHint).WritableMemory;
    }

    /// <summary>Returns the tail block's free space as a span, renting a new tail block when it has fewer than <paramref name="sizeHint"/> bytes free.</summary>
    public Span<byte> GetWritableSpan(int sizeHint = 1) => EnsureTail(sizeHint).Writable;

    /// <summary>Commits <paramref name="count"/> bytes written into the memory from <see cref="GetWritableMemory"/>.</summary>
    public void Advance(int count)
    {
        MemoryBlock? tail = _tail;
        if (count < 0 || (tail is null ? count != 0 : count > SlabMemoryPool.BlockSize - tail.End))
        {
            throw new ArgumentOutOfRangeException(nameof(count), "Advanced past the memory obtained from GetWritableMemory.");
        }

        if (tail is not null)
        {
            tail.End += count;
            _length += count;
        }
    }

    /// <summary>Appends a block (for example one a transport received into) at the tail; the chain owns it from now on.</summary>
    public void Append(MemoryBlock block)
    {
        ArgumentNullException.ThrowIfNull(block);
        if (!ReferenceEquals(block.Pool, _pool))
        {
            throw new ArgumentException("The block belongs to another pool.", nameof(block));
        }

        block.NextBlock = null;
        if (_tail is null)
        {
            _head = block;
        }
        else
        {
            _tail.NextBlock = block;
        }

        _tail = block;
        _length += block.Length;
    }

    /// <summary>Copies <paramref name="source"/> to the tail, across as many blocks as it needs.</summary>
    public void Write(ReadOnlySpan<byte> source)
    {
        while (!source.IsEmpty)
        {
            Span<byte> target = EnsureTail(1).Writable;
            int n = Math.Min(target.Length, source.Length);
            source.Slice(0, n).CopyTo(target);
            _tail!.End += n;
            _length += n;
            source = source.Slice(n);
        }
    }

    /// <summary>Everything buffered, one segment per block; valid until the next <see cref="Consume"/> or <see cref="Dispose"/>.</summary>
    public ReadOnlySequence<byte> GetSequence()
    {
        MemoryBlock? head = _head;
        if (head is null)
        {
            return ReadOnlySequence<byte>.Empty;
        }

        long running = 0;
        for (MemoryBlock? block = head; block is not null; block = block.NextBlock)
        {
            block.PrepareSegment(running);
            running += block.Length;
        }

        MemoryBlock tail = _tail!;
        return new ReadOnlySequence<byte>(head, 0, tail, tail.Length);
    }

    /// <summary>The buffered bytes as one span when they all lie in one block; false otherwise (or when nothing is buffered).</summary>
    public bool TryGetSingleSpan(out ReadOnlySpan<byte> span)
    {
        MemoryBlock? head = _head;
        if (head is not null && ReferenceEquals(head, _tail))
        {
            span = head.DataSpan;
            return true;
        }

        span = default;
        return false;
    }

    /// <summary>Drops the first <paramref name="count"/> bytes of a chain whose bytes lie in one block (see <see cref="TryGetSingleSpan"/>).</summary>
    public void ConsumeSingle(int count)
    {
        MemoryBlock? head = _head;
        if (head is null || !ReferenceEquals(head, _tail) || (uint)count > (uint)head.Length)
        {
            throw new ArgumentOutOfRangeException(nameof(count), "The chain does not hold that many bytes in one block.");
        }

        _length -= count;
        if (count == head.Length)
        {
            // Rewound like an empty tail after Consume, so its whole page is free again.
            head.Start = 0;
            head.End = 0;
            return;
        }

        head.Start += count;
    }

    /// <summary>Drops every buffered byte: returns every block but the tail to the pool and rewinds the tail for the next write.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void ConsumeAll()
    {
        // The common case inline: the bytes lie in one block (a small response body), which only rewinds.
        MemoryBlock? tail = _tail;
        if (ReferenceEquals(_head, tail))
        {
            _length = 0;
            if (tail is not null)
            {
                tail.Start = 0;
                tail.End = 0;
            }

            return;
        }

        ConsumeAllBlocks();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ConsumeAllBlocks()
    {
        MemoryBlock? block = _head;
        MemoryBlock? tail = _tail;
        while (block is not null && !ReferenceEquals(block, tail))
        {
            MemoryBlock? next = block.NextBlock;
            _pool.Return(block);
            block = next;
        }

        _head = tail;
        _length = 0;
        if (tail is not null)
        {
            tail.Start = 0;
            tail.End = 0;
        }
    }

    /// <summary>Drops everything before <paramref name="consumedTo"/> (a position of the last <see cref="GetSequence"/>) and returns fully consumed head blocks to the pool.</summary>
    public void Consume(SequencePosition consumedTo)
    {
        if (consumedTo.GetObject() is not MemoryBlock target)
        {
            return;
        }

        int index = consumedTo.GetInteger();
        MemoryBlock? block = _head;
        while (block is not null && !ReferenceEquals(block, target))
        {
            MemoryBlock? next = block.NextBlock;
            _length -= block.Length;
            _pool.Return(block);
            block = next;
        }

        if (block is null)
        {
            _head = null;
            _tail = null;
            throw new ArgumentException("The position does not belong to this chain.", nameof(consumedTo));
        }

        if ((uint)index > (uint)block.Length)
        {
            throw new ArgumentOutOfRangeException(nameof(consumedTo), "The position is past the data of its block.");
        }

        block.Start += index;
        _length -= index;
        _head = block;
        if (block.Start < block.End)
        {
            return;
        }

        if (ReferenceEquals(block, _tail))
        {
            // An empty tail stays for the next write, rewound so its whole page is free again.
            block.Start = 0;
            block.End = 0;
            return;
        }

        _head = block.NextBlock;
        _pool.Return(block);
    }

    /// <summary>
    /// Drops every byte appended after the first <paramref name="length"/> buffered bytes and returns the blocks
    /// that held only those to the pool: undoes appends that must not be sent (a response head that failed
    /// halfway). The bytes before <paramref name="length"/> and their blocks are not touched, so a send of
    /// them that is in flight is safe.
    /// </summary>
    internal void TruncateTo(long length)
    {
        if ((ulong)length > (ulong)_length)
        {
            throw new ArgumentOutOfRangeException(nameof(length), "The chain holds fewer bytes.");
        }

        MemoryBlock? block = _head;
        if (length == _length || block is null)
        {
            return;
        }

        long remaining = length;
        while (remaining > block.Length)
        {
            remaining -= block.Length;
            block = block.NextBlock!;
        }

        block.End = block.Start + (int)remaining;
        if (block.Start == block.End)
        {
            // Only the head can end up empty (length 0): rewound like an empty tail after Consume.
            block.Start = 0;
            block.End = 0;
        }

        MemoryBlock? dropped = block.NextBlock;
        block.NextBlock = null;
        _tail = block;
        _length = length;
        while (dropped is not null)
        {
            MemoryBlock? next = dropped.NextBlock;
            _pool.Return(dropped);
            dropped = next;
        }
    }

    /// <summary>Returns every block to the pool and leaves the chain empty and reusable.</summary>
    public void Dispose()
    {
        MemoryBlock? block = _head;
        _head = null;
        _tail = null;
        _length = 0;
        while (block is not null)
        {
            MemoryBlock? next = block.NextBlock;
            _pool.Return(block);
            block = next;
        }
    }

    /// <inheritdoc/>
    Memory<byte> IBufferWriter<byte>.GetMemory(int sizeHint) => GetWritableMemory(sizeHint);

    /// <inheritdoc/>
    Span<byte> IBufferWriter<byte>.GetSpan(int sizeHint) => GetWritableSpan(sizeHint);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private MemoryBlock EnsureTail(int sizeHint)
    {
        // The common case inline: a tail with room for the hint (1 to a block).
        MemoryBlock? tail = _tail;
        if (tail is not null && (uint)(sizeHint - 1) < (uint)(SlabMemoryPool.BlockSize - tail.End))
        {
            return tail;
        }

        return AppendTail(sizeHint);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private MemoryBlock AppendTail(int sizeHint)
    {
        if (sizeHint > SlabMemoryPool.BlockSize)
        {
            throw new ArgumentOutOfRangeException(nameof(sizeHint), $"A block holds at most {SlabMemoryPool.BlockSize} bytes.");
        }

        if (sizeHint < 1)
        {
            sizeHint = 1;
        }

        MemoryBlock? tail = _tail;
        if (tail is not null && SlabMemoryPool.BlockSize - tail.End >= sizeHint)
        {
            return tail;
        }

        MemoryBlock block = _pool.Rent();
        if (tail is null)
        {
            _head = block;
        }
        else
        {
            tail.NextBlock = block;
        }

        _tail = block;
        return block;
    }
}
