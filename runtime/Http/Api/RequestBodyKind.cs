namespace Falconet.Http;

/// <summary>How a request's body is delimited (RFC 9112 section 6; on HTTP/2, RFC 9113 section 8.1).</summary>
public enum RequestBodyKind : byte
{
    /// <summary>No body: neither Transfer-Encoding nor a non-zero Content-Length.</summary>
    None,

    /// <summary>Exactly Content-Length bytes follow the header section.</summary>
    ContentLength,

    /// <summary>The chunked transfer coding, decoded with <see cref="Http1.ChunkedDecoder"/>.</summary>
    Chunked,

    /// <summary>HTTP/2 DATA frames without a Content-Length: the body ends with the stream's END_STREAM.</summary>
    Frames,
}
