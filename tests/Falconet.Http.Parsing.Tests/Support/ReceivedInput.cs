using System;
using System.Buffers;
using System.Collections.Generic;
using Falconet.Buffers;

namespace Falconet.Http.Parsing.Tests.Support;

/// <summary>The bytes a driven connection has received and not consumed: the driver appends arrivals and consumes what the parser used.</summary>
internal interface IReceivedInput
{
    /// <summary>Bytes received and not consumed.</summary>
    long Buffered { get; }

    void Append(byte[][] arrival);

    /// <summary>Everything not consumed; positions in it are valid for <see cref="Consume"/> until the next call.</summary>
    ReadOnlySequence<byte> GetUnconsumed();

    void Consume(SequencePosition consumedTo);
}

/// <summary>Each arrived piece is its own segment, so the pieces decide exactly where lines cross segments.</summary>
internal sealed class SegmentInput : IReceivedInput
{
    private readonly List<byte[]> _received = [];
    private long _total;
    private long _consumed;
    private ReadOnlySequence<byte> _last;

    public long Buffered => _total - _consumed;

    public void Append(byte[][] arrival)
    {
        foreach (byte[] piece in arrival)
        {
            _received.Add(piece);
            _total += piece.Length;
        }
    }

    public ReadOnlySequence<byte> GetUnconsumed() => _last = Segments.Chain(_received).Slice(_consumed);

    public void Consume(SequencePosition consumedTo) => _consumed += _last.Slice(0, consumedTo).Length;
}

/// <summary>The runtime's own input: a <see cref="BlockChain"/> of 4 KiB pool blocks, split where the blocks end whatever the arrivals were.</summary>
internal sealed class BlockChainInput(BlockChain chain) : IReceivedInput
{
    public long Buffered => chain.Length;

    public void Append(byte[][] arrival)
    {
        foreach (byte[] piece in arrival)
        {
            chain.Write(piece);
        }
    }

    public ReadOnlySequence<byte> GetUnconsumed() => chain.GetSequence();

    public void Consume(SequencePosition consumedTo) => chain.Consume(consumedTo);
}
