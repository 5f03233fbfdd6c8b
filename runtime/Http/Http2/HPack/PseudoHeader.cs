namespace Falconet.Http.Http2.HPack;

/// <summary>An HTTP/2 pseudo-header field (RFC 9113 section 8.3; <see cref="Protocol"/> from RFC 8441), as the HPACK decoder names it.</summary>
/// <remarks>The values follow the generator's list of pseudo-headers, which the generated static table refers to by name.</remarks>
public enum PseudoHeader : byte
{
    /// <summary>A name that starts with a colon but is no pseudo-header defined for requests or responses: a malformed message.</summary>
    Unknown = 0,

    /// <summary><c>:authority</c>.</summary>
    Authority = 1,

    /// <summary><c>:method</c>.</summary>
    Method = 2,

    /// <summary><c>:path</c>.</summary>
    Path = 3,

    /// <summary><c>:scheme</c>.</summary>
    Scheme = 4,

    /// <summary><c>:status</c>.</summary>
    Status = 5,

    /// <summary><c>:protocol</c> (extended CONNECT, RFC 8441).</summary>
    Protocol = 6,
}
