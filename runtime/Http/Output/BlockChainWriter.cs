using System;
using System.Buffers;
using Falconet.Buffers;

namespace Falconet.Http;

/// <summary>
/// An <see cref="IBufferWriter{T}"/> over a <see cref="BlockChain"/>: writes land in the tail pool block without a
/// copy. A size hint larger than a block is served from a rented array and copied into blocks on Advance.
/// </summary>
internal sealed class BlockChainWriter : IBufferWriter<byte>, IDisposable
{
    private readonly BlockChain _chain;
    private byte[]? _oversize;
    private bool _oversizeHandedOut;

    public BlockChainWriter(BlockChain chain)
    {
        _chain = chain;
    }

    public BlockChain Chain => _chain;

    public void Advance(int count)
    {
        if (_oversizeHandedOut)
        {
            _oversizeHandedOut = false;
            byte[] oversize = _oversize!;
            if ((uint)count > (uint)oversize.Length)
            {
                throw new ArgumentOutOfRangeException(nameof(count));
            }

            Write(oversize.AsSpan(0, count));
            return;
        }

        _chain.Advance(count);
    }

    public Memory<byte> GetMemory(int sizeHint = 0)
    {
        if (sizeHint <= 0)
        {
            sizeHint = 1;
        }

        _oversizeHandedOut = false;
        if (sizeHint <= SlabMemoryPool.BlockSize)
        {
            Memory<byte> memory = _chain.GetWritableMemory(sizeHint);
            if (memory.Length >= sizeHint)
            {
                return memory;
            }
        }

        if (_oversize is null || _oversize.Length < sizeHint)
        {
            if (_oversize is not null)
            {
                ArrayPool<byte>.Shared.Return(_oversize);
            }

            _oversize = ArrayPool<byte>.Shared.Rent(sizeHint);
        }

        _oversizeHandedOut = true;
        return _oversize;
    }

    public Span<byte> GetSpan(int sizeHint = 0)
    {
        if ((uint)(sizeHint - 1) < SlabMemoryPool.BlockSize)
        {
            // The common case without a Memory in between: the tail block's free space, or a new block's.
            _oversizeHandedOut = false;
            return _chain.GetWritableSpan(sizeHint);
        }

        return GetMemory(sizeHint).Span;
    }

    /// <summary>Forgets memory handed out and not advanced, so that an Advance after a rollback cannot copy stale bytes from it.</summary>
    public void DiscardPendingMemory() => _oversizeHandedOut = false;

    /// <summary>Copies <paramref name="data"/> into the chain, block after block.</summary>
    public void Write(ReadOnlySpan<byte> data)
    {
        while (!data.IsEmpty)
        {
            Span<byte> target = _chain.GetWritableSpan(1);
            int count = Math.Min(target.Length, data.Length);
            data[..count].CopyTo(target);
            _chain.Advance(count);
            data = data[count..];
        }
    }

    public void Dispose()
    {
        _oversizeHandedOut = false;
        if (_oversize is not null)
        {
            ArrayPool<byte>.Shared.Return(_oversize);
            _oversize = null;
        }
    }
}
