using System;
using System.Buffers;
using System.Collections.Generic;

namespace Falconet.Http.Parsing.Tests.Support;

/// <summary>Builds multi-segment sequences, the shape a chain of pool blocks gives the parser.</summary>
internal static class Segments
{
    public static ReadOnlySequence<byte> Chain(IReadOnlyList<byte[]> pieces)
    {
        if (pieces.Count == 0)
        {
            return ReadOnlySequence<byte>.Empty;
        }

        var first = new Segment(pieces[0], 0);
        Segment last = first;
        for (int i = 1; i < pieces.Count; i++)
        {
            last = last.Append(pieces[i]);
        }

        return new ReadOnlySequence<byte>(first, 0, last, last.Memory.Length);
    }

    public static byte[][] SplitAt(byte[] data, params int[] offsets)
    {
        var pieces = new List<byte[]>();
        int start = 0;
        foreach (int offset in offsets)
        {
            pieces.Add(data[start..offset]);
            start = offset;
        }

        pieces.Add(data[start..]);
        return [.. pieces];
    }

    public static byte[][] OneByteEach(byte[] data)
    {
        var pieces = new byte[data.Length][];
        for (int i = 0; i < data.Length; i++)
        {
            pieces[i] = [data[i]];
        }

        return pieces;
    }

    public static byte[][] RandomPieces(byte[] data, Random random, int maxPiece)
    {
        var pieces = new List<byte[]>();
        int start = 0;
        while (start < data.Length)
        {
            int length = Math.Min(random.Next(1, maxPiece + 1), data.Length - start);
            pieces.Add(data[start..(start + length)]);
            start += length;
        }

        return [.. pieces];
    }

    private sealed class Segment : ReadOnlySequenceSegment<byte>
    {
        public Segment(ReadOnlyMemory<byte> memory, long runningIndex)
        {
            Memory = memory;
            RunningIndex = runningIndex;
        }

        public Segment Append(ReadOnlyMemory<byte> memory)
        {
            var next = new Segment(memory, RunningIndex + Memory.Length);
            Next = next;
            return next;
        }
    }
}
