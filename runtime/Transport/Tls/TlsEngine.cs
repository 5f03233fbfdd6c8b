namespace Falconet.Server;

/// <summary>What runs the TLS protocol of an HTTPS endpoint (<see cref="TlsServerOptions.Engine"/>).</summary>
public enum TlsEngine
{
    /// <summary>.NET's <see cref="System.Net.Security.SslStream"/> (on Linux, the system's OpenSSL through memory BIOs); every platform.</summary>
    SslStream,

    /// <summary>
    /// The system's OpenSSL 3 (<c>libssl.so.3</c>) called directly, its records written into and read from the connection's
    /// pool blocks: fewer copies and no SslStream layer. Linux only; an endpoint that chooses it elsewhere fails to start.
    /// </summary>
    OpenSsl,
}
