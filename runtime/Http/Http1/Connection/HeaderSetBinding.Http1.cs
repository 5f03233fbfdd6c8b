using System;
using System.Buffers;
using Falconet.Http.Http1;

namespace Falconet.Http;

/// <summary>The HTTP/1.1 part of the binding: a request head through <see cref="Http1Parser"/>, specialized for the set.</summary>
internal abstract partial class HeaderSetBinding
{
    /// <summary>
    /// The parser's request line into <paramref name="request"/>; <paramref name="emptyLinesBefore"/> counts the
    /// empty lines the connection already consumed before this line (they count toward the line limit).
    /// </summary>
    public abstract bool TryParseRequestLine(HttpRequest request, ref SequenceReader<byte> reader, HttpLimits limits, int emptyLinesBefore);

    /// <summary>
    /// <see cref="Http1Parser.TryParseRepeatableRequestHead"/> into <paramref name="request"/>: a whole head in one span, in one
    /// call; a request line or a header section that repeats the connection's previous one byte for byte is taken whole.
    /// </summary>
    public abstract bool TryParseRequestHead(HttpRequest request, ReadOnlySpan<byte> span, HttpLimits limits, out int consumed);

    /// <summary><see cref="Http1Parser.TryParseHeaders"/> into the headers of <paramref name="request"/>.</summary>
    public abstract bool TryParseHeaders(HttpRequest request, ref SequenceReader<byte> reader, HttpLimits limits, ref HeaderParseState state);
}

/// <summary>The HTTP/1.1 parse of a request head, compiled by the JIT for one header set.</summary>
internal abstract partial class HeaderSetBinding<THeaderSet>
{
    public sealed override bool TryParseRequestLine(HttpRequest request, ref SequenceReader<byte> reader, HttpLimits limits, int emptyLinesBefore)
    {
        var handler = new Http1ParsingHandler<THeaderSet>(request, request.Headers);
        return Http1Parser.TryParseRequestLine(ref handler, ref reader, limits, emptyLinesBefore);
    }

    public sealed override bool TryParseRequestHead(HttpRequest request, ReadOnlySpan<byte> span, HttpLimits limits, out int consumed)
    {
        var handler = new Http1ParsingHandler<THeaderSet>(request, request.Headers);
        return Http1Parser.TryParseRepeatableRequestHead(ref handler, span, limits, out consumed);
    }

    public sealed override bool TryParseHeaders(HttpRequest request, ref SequenceReader<byte> reader, HttpLimits limits, ref HeaderParseState state)
    {
        var handler = new Http1ParsingHandler<THeaderSet>(request, request.Headers);
        return Http1Parser.TryParseHeaders(ref handler, ref reader, limits, ref state);
    }
}
