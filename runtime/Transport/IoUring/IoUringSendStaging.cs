using System;
using System.Buffers;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Falconet.Buffers;

namespace Falconet.Transport.IoUring;

/// <summary>
/// A loop's copy area for small sends: a send of at most one block is copied here, submitted with the loop turn's batch,
/// and completes at once, so the connection goes on (normally to its next receive) in the same turn instead of waiting a
/// turn for the send's completion. Blocks come from the loop's pool on the owner path; consecutive sends share a block,
/// which goes back to the pool once the last send in it completed and the turn ends with nothing in it.
/// </summary>
internal sealed unsafe class IoUringSendStaging : IDisposable
{
    /// <summary>The largest send that is copied; larger sends are sent from the caller's memory and complete with the kernel.</summary>
    public const int Limit = SlabMemoryPool.BlockSize;

    private readonly SlabMemoryPool _pool;
    private readonly Stack<StagingBlock> _unused = new();
    private StagingBlock? _current;

    public IoUringSendStaging(SlabMemoryPool pool) => _pool = pool;

    /// <summary>Copies <paramref name="data"/> (at most <see cref="Limit"/> bytes) and returns the block holding it and where it starts.</summary>
    public StagingBlock Stage(in ReadOnlySequence<byte> data, out byte* start)
    {
        int length = (int)data.Length;
        StagingBlock? block = _current;
        if (block is not null && block.Pending == 0)
        {
            block.Used = 0;
        }

        if (block is null || SlabMemoryPool.BlockSize - block.Used < length)
        {
            // A full block stays out until its last send completes (see Release).
            block = Take();
            _current = block;
        }

        data.CopyTo(new Span<byte>(block.Pointer + block.Used, length));
        start = block.Pointer + block.Used;
        block.Used += length;
        block.Pending++;
        return block;
    }

    /// <summary>One send out of <paramref name="block"/> completed.</summary>
    public void Release(StagingBlock block)
    {
        block.Pending--;
        if (block.Pending == 0 && block != _current)
        {
            Recycle(block);
        }
    }

    /// <summary>At the end of a loop turn: gives the current block back when no send is in it, so an idle loop holds no block.</summary>
    public void ReleaseIdle()
    {
        if (_current is { Pending: 0 } current)
        {
            _current = null;
            Recycle(current);
        }
    }

    public void Dispose()
    {
        if (_current is not null)
        {
            // Called once every connection of the loop closed: no send is left in it.
            Recycle(_current);
            _current = null;
        }
    }

    private StagingBlock Take()
    {
        StagingBlock block = _unused.Count > 0 ? _unused.Pop() : new StagingBlock();
        MemoryBlock memory = _pool.Rent();
        block.Memory = memory;

        // Pool blocks live in pinned slabs: the address stays valid while the kernel reads it.
        block.Pointer = (byte*)Unsafe.AsPointer(ref MemoryMarshal.GetReference(memory.Memory.Span));
        block.Used = 0;
        return block;
    }

    private void Recycle(StagingBlock block)
    {
        if (block.Memory is { } memory)
        {
            block.Memory = null;
            block.Pointer = null;
            _pool.Return(memory);
            _unused.Push(block);
        }
    }
}

/// <summary>A pool block that small sends are copied into, with the count of its sends still in the kernel.</summary>
internal sealed unsafe class StagingBlock
{
    public MemoryBlock? Memory;
    public byte* Pointer;
    public int Used;
    public int Pending;
}
