namespace Falconet.Http;

/// <summary>The HTTP version that carried a request (<see cref="HttpRequest.ProtocolVersion"/>).</summary>
public enum HttpProtocolVersion : byte
{
    /// <summary>HTTP/1.0.</summary>
    Http10,

    /// <summary>HTTP/1.1 (also a request line of HTTP/1.2 to 1.9, served as 1.1).</summary>
    Http11,

    /// <summary>HTTP/2 (RFC 9113).</summary>
    Http2,
}
