using System;
using System.Buffers;
using System.Collections.Generic;
using System.IO;
using System.Text;
using Falconet.Http.Http1;
using Shouldly;

namespace Falconet.Http.Parsing.Tests.Support;

/// <summary>Encodes bodies with the chunked coding (random chunk sizes, extensions, trailers) and decodes them back.</summary>
internal static class ChunkedBodies
{
    public static byte[] Encode(byte[] body, Random random, int maxChunk)
    {
        using var output = new MemoryStream();
        int offset = 0;
        while (offset < body.Length)
        {
            int size = Math.Min(random.Next(1, maxChunk + 1), body.Length - offset);
            string digits = random.Next(2) == 0 ? size.ToString("x") : size.ToString("X" + random.Next(1, 9));
            string extension = random.Next(4) == 0 ? ";name=\"v a l\";flag" : "";
            output.Write(Encoding.ASCII.GetBytes(digits + extension + "\r\n"));
            output.Write(body, offset, size);
            output.Write("\r\n"u8);
            offset += size;
        }

        output.Write(random.Next(2) == 0 ? "0\r\n\r\n"u8 : "0;end\r\nX-Checksum: done\r\n\r\n"u8);
        return output.ToArray();
    }

    /// <summary>Decodes input that is all present, as a chain of the given pieces, into destinations of random sizes.</summary>
    public static byte[] DecodeAtOnce(byte[][] pieces, Random random, int maxDestination, HttpLimits limits)
    {
        var decoder = default(ChunkedDecoder);
        var reader = new SequenceReader<byte>(Segments.Chain(pieces));
        var body = new MemoryStream();
        byte[] destination = new byte[maxDestination];
        bool completed;
        do
        {
            int size = random.Next(1, maxDestination + 1);
            int written = decoder.Decode(ref reader, destination.AsSpan(0, size), limits, out completed);
            body.Write(destination, 0, written);
            if (written == 0 && !completed)
            {
                throw new InvalidOperationException("The decoder asked for more input than the encoded body holds.");
            }
        }
        while (!completed);

        if (!reader.End)
        {
            throw new InvalidOperationException("The decoder stopped before the end of the encoded body.");
        }

        return body.ToArray();
    }

    /// <summary>Decodes input that arrives piece by piece: each call sees the unconsumed rest and the next piece.</summary>
    public static byte[] DecodeIncrementally(IEnumerable<byte[]> pieces, int destinationSize, HttpLimits limits)
    {
        var decoder = default(ChunkedDecoder);
        var body = new MemoryStream();
        byte[] destination = new byte[destinationSize];
        byte[] leftover = [];
        bool completed = false;
        foreach (byte[] piece in pieces)
        {
            completed.ShouldBeFalse();
            var reader = new SequenceReader<byte>(Segments.Chain([leftover, piece]));
            int written;
            do
            {
                written = decoder.Decode(ref reader, destination, limits, out completed);
                body.Write(destination, 0, written);
            }
            while (written > 0 && !completed);

            leftover = reader.UnreadSequence.ToArray();
        }

        completed.ShouldBeTrue();
        leftover.ShouldBeEmpty();
        return body.ToArray();
    }
}
