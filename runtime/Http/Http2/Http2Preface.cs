using System;
using System.Buffers;

namespace Falconet.Http.Http2;

/// <summary>The client connection preface (RFC 9113 section 3.4): a fixed 24-octet string, then a SETTINGS frame.</summary>
internal static class Http2Preface
{
    /// <summary>"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".</summary>
    public static ReadOnlySpan<byte> Bytes => "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"u8;

    public const int Length = 24;

    /// <summary>
    /// True when <paramref name="input"/> starts as the preface does, as far as it goes: what an HTTP/1.1 parser sees as the
    /// request line "PRI * HTTP/2.0" of an unsupported version is a client speaking HTTP/2 with prior knowledge.
    /// </summary>
    public static bool IsPrefixOf(ReadOnlySequence<byte> input)
    {
        int length = (int)Math.Min(input.Length, Length);
        Span<byte> start = stackalloc byte[Length];
        input.Slice(0, length).CopyTo(start);
        return start[..length].SequenceEqual(Bytes[..length]);
    }
}
