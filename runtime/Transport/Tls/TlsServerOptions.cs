using System;
using System.Collections.Generic;
using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;

namespace Falconet.Server;

/// <summary>
/// The TLS settings of an HTTPS endpoint: its certificate (fixed, or chosen per connection by the SNI host name), the
/// protocol versions, client certificates and the handshake timeout. Copied when the server starts.
/// </summary>
public sealed class TlsServerOptions
{
    /// <summary>The certificate presented to every client (with its private key); ignored when <see cref="ServerCertificateSelector"/> is set.</summary>
    public X509Certificate2? ServerCertificate { get; set; }

    /// <summary>
    /// Chooses the certificate for each handshake from the host name the client sent with SNI (null when it sent none).
    /// Returning null refuses the handshake: the client gets an unrecognized_name alert and the connection closes. Called
    /// during the handshake, where the connection's code runs (with libuv, a loop thread that serves many connections): keep
    /// it fast (a dictionary lookup), never blocking. Each
    /// distinct certificate it returns is prepared once (its chain built) and reused.
    /// </summary>
    public Func<string?, X509Certificate2?>? ServerCertificateSelector { get; set; }

    /// <summary>The protocol versions offered (default TLS 1.2 and TLS 1.3); <see cref="SslProtocols.None"/> leaves the choice to the system's policy.</summary>
    public SslProtocols EnabledProtocols { get; set; } = SslProtocols.Tls12 | SslProtocols.Tls13;

    /// <summary>Whether clients are asked for a certificate (default <see cref="ClientCertificateMode.NoCertificate"/>).</summary>
    public ClientCertificateMode ClientCertificateMode { get; set; }

    /// <summary>
    /// Decides whether a client certificate is accepted, given the chain the system built and its errors; by default a
    /// certificate is accepted only when the system found no error (its chain ends at a root the machine trusts).
    /// </summary>
    public Func<X509Certificate2, X509Chain?, SslPolicyErrors, bool>? ClientCertificateValidation { get; set; }

    /// <summary>
    /// The application protocols offered with ALPN, in the server's order of preference (default: h2, then http/1.1;
    /// SslStream picks the first of these the client offers). The client's pick is on
    /// <c>TransportConnection.NegotiatedApplicationProtocol</c>, and the server runs that protocol on the connection. A
    /// client that offers only other protocols fails the handshake (no_application_protocol alert, counted as
    /// <c>protocol</c>); one that offers no ALPN at all is served HTTP/1.1. The server offers only those its endpoint serves
    /// (<c>HttpsEndpoint.Protocols</c>). Empty: no ALPN. A protocol the server does not serve fails the start with a
    /// message naming it.
    /// </summary>
    public IList<SslApplicationProtocol> ApplicationProtocols { get; set; } = [SslApplicationProtocol.Http2, SslApplicationProtocol.Http11];

    /// <summary>How long the TLS handshake may take from the accept (default 10 s); then the connection is closed. Checked by the server's heartbeat.</summary>
    public TimeSpan HandshakeTimeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>
    /// The most encrypted bytes a connection holds that the socket has not taken yet (default
    /// <see cref="DefaultMaxBytesInFlight"/>): a response is encrypted ahead while earlier records are being sent, up to this
    /// bound, then waits for the socket, so a slow reader holds at most this much beside the response's own buffer. At
    /// least <see cref="MinMaxBytesInFlight"/> (two full records: one in flight while the next is encrypted).
    /// </summary>
    public int MaxBytesInFlight { get; set; } = DefaultMaxBytesInFlight;

    /// <summary>
    /// What runs the TLS protocol (default <see cref="TlsEngine.Auto"/>: the OpenSSL engine where it can run and honour every
    /// option here, otherwise SslStream, with the reason logged when the server starts). <see cref="TlsEngine.OpenSsl"/>
    /// calls the system's OpenSSL 3 directly, with every option of this class; on a platform without <c>libssl.so.3</c> (not
    /// Linux), or with an option OpenSSL cannot express (a gap in <see cref="EnabledProtocols"/>, a private key that cannot
    /// be exported), the server's start fails with a message naming it. <see cref="TlsEngine.SslStream"/> runs .NET's
    /// SslStream everywhere.
    /// </summary>
    public TlsEngine Engine { get; set; } = TlsEngine.Auto;

    /// <summary>
    /// Tests only: when set, <see cref="TlsEngine.Auto"/> takes OpenSSL as unavailable for this reason, as it does on a
    /// machine without <c>libssl.so.3</c> (the process-wide switch is the environment variable <c>FALCONET_TLS_OPENSSL=0</c>).
    /// </summary>
    internal string? OpenSslUnavailableReason { get; set; }

    /// <summary>The default of <see cref="MaxBytesInFlight"/>.</summary>
    public const int DefaultMaxBytesInFlight = 128 * 1024;

    /// <summary>The least <see cref="MaxBytesInFlight"/> accepted: two full-size records (16 KiB of plaintext each) and their overhead.</summary>
    public const int MinMaxBytesInFlight = 2 * ((16 * 1024) + 64);

    /// <summary>The most <see cref="MaxBytesInFlight"/> accepted (16 MiB).</summary>
    public const int MaxMaxBytesInFlight = 16 * 1024 * 1024;

    /// <summary>Options with the certificate and private key of two PEM files (the key may be encrypted with <paramref name="keyPassword"/>).</summary>
    public static TlsServerOptions FromPemFiles(string certificatePath, string keyPath, string? keyPassword = null)
    {
        ArgumentException.ThrowIfNullOrEmpty(certificatePath);
        ArgumentException.ThrowIfNullOrEmpty(keyPath);
        X509Certificate2 certificate = keyPassword is null
            ? X509Certificate2.CreateFromPemFile(certificatePath, keyPath)
            : X509Certificate2.CreateFromEncryptedPemFile(certificatePath, keyPassword, keyPath);
        return new TlsServerOptions { ServerCertificate = certificate };
    }

    /// <summary>Options with the certificate and private key of a PKCS#12 (PFX) file.</summary>
    public static TlsServerOptions FromPfxFile(string path, string? password)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        return new TlsServerOptions { ServerCertificate = X509CertificateLoader.LoadPkcs12FromFile(path, password) };
    }

    internal TlsServerOptions Copy() => new()
    {
        ServerCertificate = ServerCertificate,
        ServerCertificateSelector = ServerCertificateSelector,
        EnabledProtocols = EnabledProtocols,
        ClientCertificateMode = ClientCertificateMode,
        ClientCertificateValidation = ClientCertificateValidation,
        HandshakeTimeout = HandshakeTimeout,
        MaxBytesInFlight = MaxBytesInFlight,
        Engine = Engine,
        OpenSslUnavailableReason = OpenSslUnavailableReason,
        ApplicationProtocols = new List<SslApplicationProtocol>(ApplicationProtocols ?? []),
    };

    internal void Validate()
    {
        if (ServerCertificateSelector is null)
        {
            if (ServerCertificate is null)
            {
                throw new InvalidOperationException("An HTTPS endpoint needs a ServerCertificate or a ServerCertificateSelector.");
            }

            if (!ServerCertificate.HasPrivateKey)
            {
                throw new InvalidOperationException($"The server certificate '{ServerCertificate.Subject}' has no private key.");
            }
        }

        if (!Enum.IsDefined(ClientCertificateMode))
        {
            throw new ArgumentOutOfRangeException(nameof(ClientCertificateMode), ClientCertificateMode, "Unknown client certificate mode.");
        }

        if (!Enum.IsDefined(Engine))
        {
            throw new ArgumentOutOfRangeException(nameof(Engine), Engine, "Unknown TLS engine.");
        }

        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(HandshakeTimeout, TimeSpan.Zero, nameof(HandshakeTimeout));
        if (MaxBytesInFlight is < MinMaxBytesInFlight or > MaxMaxBytesInFlight)
        {
            throw new ArgumentOutOfRangeException(nameof(MaxBytesInFlight), MaxBytesInFlight,
                $"TlsServerOptions.MaxBytesInFlight must be between {MinMaxBytesInFlight} and {MaxMaxBytesInFlight} bytes.");
        }

        ArgumentNullException.ThrowIfNull(ApplicationProtocols, nameof(ApplicationProtocols));
        for (int i = 0; i < ApplicationProtocols.Count; i++)
        {
            SslApplicationProtocol protocol = ApplicationProtocols[i];
            if (protocol.Protocol.IsEmpty)
            {
                throw new InvalidOperationException($"TlsServerOptions.ApplicationProtocols[{i}] is empty.");
            }

            for (int j = 0; j < i; j++)
            {
                if (ApplicationProtocols[j] == protocol)
                {
                    throw new InvalidOperationException($"TlsServerOptions.ApplicationProtocols lists '{protocol}' twice.");
                }
            }
        }
    }
}
