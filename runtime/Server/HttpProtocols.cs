using System;

namespace Falconet.Server;

/// <summary>The HTTP versions an endpoint serves (<see cref="FalconetServerOptions.Protocols"/>, <see cref="HttpsEndpoint.Protocols"/>, <see cref="HttpEndpoint.Protocols"/>).</summary>
[Flags]
public enum HttpProtocols
{
    /// <summary>None: not a valid setting.</summary>
    None = 0,

    /// <summary>HTTP/1.0 and HTTP/1.1.</summary>
    Http1 = 1,

    /// <summary>
    /// HTTP/2 (RFC 9113). On HTTPS chosen with ALPN ("h2"); on plain HTTP a client must start with the HTTP/2 connection
    /// preface (prior knowledge).
    /// </summary>
    Http2 = 2,

    /// <summary>Both (the default): HTTPS offers "h2" and "http/1.1" with ALPN, h2 preferred; plain HTTP serves HTTP/1.1 and recognises the HTTP/2 preface.</summary>
    Http1AndHttp2 = Http1 | Http2,
}
