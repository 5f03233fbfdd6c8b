using Falconet.Transport.Proxy;

namespace Falconet.Http;

/// <summary>Reads what the PROXY protocol header of a request's connection said.</summary>
public static class HttpContextProxyExtensions
{
    /// <summary>
    /// The PROXY header of the request's connection (version, command, addresses, TLVs such as ALPN, authority, unique id and
    /// the proxy's TLS details), or null when the endpoint does not take PROXY. The client's address is also
    /// <see cref="HttpContext.RemoteEndPoint"/>.
    /// </summary>
    public static ProxyProtocolInfo? GetProxyProtocolInfo(this HttpContext context) => context?.Transport.ProxyInfo;
}
