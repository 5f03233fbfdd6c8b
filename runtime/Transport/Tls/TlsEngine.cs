namespace Falconet.Server;

/// <summary>What runs the TLS protocol of an HTTPS endpoint (<see cref="TlsServerOptions.Engine"/>).</summary>
public enum TlsEngine
{
    /// <summary>.NET's <see cref="System.Net.Security.SslStream"/> (on Linux, the system's OpenSSL through memory BIOs); every platform.</summary>
    SslStream = 0,

    /// <summary>
    /// The system's OpenSSL 3 (<c>libssl.so.3</c>) called directly, its records written into and read from the connection's
    /// pool blocks: fewer copies and no SslStream layer. Linux only; an endpoint that chooses it elsewhere, or with an option
    /// it cannot honour, fails to start.
    /// </summary>
    OpenSsl = 1,

    /// <summary>
    /// The default: <see cref="OpenSsl"/> where it can run and honour every option of the endpoint, otherwise
    /// <see cref="SslStream"/>. Decided once per endpoint when the server starts; the engine chosen, and why not OpenSSL when
    /// it is SslStream, is logged at information level. An endpoint with a
    /// <see cref="TlsServerOptions.ServerCertificateSelector"/> runs SslStream: its certificates are known only per handshake,
    /// too late to tell whether OpenSSL can use them (choose <see cref="OpenSsl"/> to run it there). The environment variable
    /// <c>FALCONET_TLS_OPENSSL=0</c> makes it choose SslStream.
    /// </summary>
    Auto = 2,
}
