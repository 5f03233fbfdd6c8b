namespace Falconet.Http;

/// <summary>How a request's body is delimited (RFC 9112 section 6).</summary>
public enum RequestBodyKind : byte
{
    /// <summary>No body: neither Transfer-Encoding nor a non-zero Content-Length.</summary>
    None,

    /// <summary>Exactly Content-Length bytes follow the header section.</summary>
    ContentLength,

    /// <summary>The chunked transfer coding, decoded with <see cref="Http1.ChunkedDecoder"/>.</summary>
    Chunked,
}
