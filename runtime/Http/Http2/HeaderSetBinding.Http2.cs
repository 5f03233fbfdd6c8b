using System;
using Falconet.Http.Http2;
using Falconet.Http.Http2.HPack;

namespace Falconet.Http;

/// <summary>The HTTP/2 part of the binding: a header block through the HPACK decoder, specialized for the set.</summary>
internal abstract partial class HeaderSetBinding
{
    /// <summary>
    /// Decodes an HTTP/2 header block with the decoder compiled for the set (a virtual call per block; inside, the set's
    /// matcher is a direct call): the request's pseudo-headers into <paramref name="head"/>, its fields into its headers, or
    /// with <paramref name="trailers"/> into its trailers. <paramref name="request"/> null: a block only checked.
    /// </summary>
    public abstract HPackDecodeResult DecodeHttp2Request(HPackDecoder decoder, ReadOnlySpan<byte> block, Http2RequestHead head, HttpRequest? request, int maxFields, bool trailers);
}

/// <summary>The HTTP/2 decode of a header block, compiled by the JIT for one header set.</summary>
internal abstract partial class HeaderSetBinding<THeaderSet>
{
    public sealed override HPackDecodeResult DecodeHttp2Request(HPackDecoder decoder, ReadOnlySpan<byte> block, Http2RequestHead head, HttpRequest? request, int maxFields, bool trailers)
    {
        var handler = new Http2RequestHeadersHandler<THeaderSet>(head, request, maxFields, trailers);
        return decoder.Decode(block, ref handler);
    }
}
