using Falconet.Transport.Tls;

namespace Falconet.Http;

/// <summary>Reads the TLS parameters of the connection a request arrived on.</summary>
public static class HttpContextTlsExtensions
{
    /// <summary>The TLS parameters of the request's connection, or null when it arrived over plain TCP.</summary>
    public static TlsConnectionInfo? GetTlsConnectionInfo(this HttpContext context) => context?.Transport.TlsInfo;
}
