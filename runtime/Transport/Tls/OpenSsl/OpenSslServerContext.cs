using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Net.Security;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Security.Authentication;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using Falconet.Server;

namespace Falconet.Transport.Tls.OpenSsl;

/// <summary>
/// The OpenSSL side of one HTTPS endpoint: an <c>SSL_CTX</c> per certificate (key, chain, protocol versions, ALPN,
/// client-certificate request), built once; with a <see cref="TlsServerOptions.ServerCertificateSelector"/> the SNI
/// callback switches each handshake to the context of the certificate the selector picked.
/// </summary>
internal sealed unsafe class OpenSslServerContext
{
    private static readonly byte[] s_sessionIdContext = "falconet"u8.ToArray();

    private readonly TlsServerOptions _options;
    private readonly int _minVersion;
    private readonly int _maxVersion;

    // The ALPN protocols in wire format (length-prefixed names) after a 4-byte length, pinned for the contexts' lifetime.
    private readonly byte[]? _alpn;
    private readonly SafeSslContextHandle _initial;
    // One context per certificate the selector returned, by the certificate's SHA-256 thumbprint: a selector that loads
    // a new instance of the same certificate for every handshake must not make a context (and an entry) per handshake.
    private readonly ConcurrentDictionary<string, SafeSslContextHandle>? _selected;

    /// <exception cref="InvalidOperationException">An option the engine cannot honour, named.</exception>
    public OpenSslServerContext(TlsServerOptions options, IList<SslApplicationProtocol> applicationProtocols)
    {
        if (OpenSslSupport.UnavailableReason is { } unavailable)
        {
            throw new InvalidOperationException(
                $"TlsServerOptions.Engine is OpenSsl, which calls the system's libssl.so.3, but {unavailable}; choose TlsEngine.SslStream (or Auto) on this machine.");
        }

        _options = options;
        (_minVersion, _maxVersion) = VersionRange(options.EnabledProtocols);
        _alpn = WireFormat(applicationProtocols);
        if (options.ServerCertificateSelector is null)
        {
            _initial = Create(options.ServerCertificate);
        }
        else
        {
            // No certificate: the SNI callback sets the selected one's context before the server needs a certificate.
            _initial = Create(null);
            _selected = new ConcurrentDictionary<string, SafeSslContextHandle>(StringComparer.Ordinal);
        }
    }

    /// <summary>How many certificates the selector has returned so far, each with its own context.</summary>
    internal int SelectedContexts => _selected?.Count ?? 0;

    /// <summary>The options the endpoint was started with.</summary>
    public TlsServerOptions Options => _options;

    /// <summary>A new server-side <c>SSL</c> on the endpoint's first context.</summary>
    public SafeSslHandle NewSession()
    {
        bool added = false;
        _initial.DangerousAddRef(ref added);
        try
        {
            nint ssl = LibSsl.SSL_new(_initial.DangerousGetHandle());
            if (ssl == 0)
            {
                throw new InvalidOperationException("OpenSSL could not create a session: " + LibSsl.TakeErrors());
            }

            LibSsl.SSL_set_accept_state(ssl);
            return new SafeSslHandle(ssl);
        }
        finally
        {
            _initial.DangerousRelease();
        }
    }

    /// <summary>
    /// Switches <paramref name="ssl"/> to the context of the certificate the selector picks for <paramref name="hostName"/>;
    /// false when it picks none. Called from the SNI callback, during the handshake.
    /// </summary>
    public bool Select(nint ssl, string? hostName)
    {
        X509Certificate2? certificate = _options.ServerCertificateSelector!(hostName);
        if (certificate is null)
        {
            return false;
        }

        if (!certificate.HasPrivateKey)
        {
            throw new AuthenticationException($"The certificate selected for '{hostName}' has no private key.");
        }

        SafeSslContextHandle context = _selected!.GetOrAdd(certificate.GetCertHashString(HashAlgorithmName.SHA256),
            static (_, pair) => pair.Context.Create(pair.Certificate), (Context: this, Certificate: certificate));
        LibSsl.SSL_set_SSL_CTX(ssl, context.DangerousGetHandle());
        return true;
    }

    private SafeSslContextHandle Create(X509Certificate2? certificate)
    {
        nint ctx = LibSsl.SSL_CTX_new(LibSsl.TLS_server_method());
        if (ctx == 0)
        {
            throw new InvalidOperationException("OpenSSL could not create a context: " + LibSsl.TakeErrors());
        }

        var handle = new SafeSslContextHandle(ctx);
        try
        {
            // Client-initiated renegotiation is a known denial-of-service lever, and HTTP over TLS never needs it.
            LibSsl.SSL_CTX_set_options(ctx, LibSsl.SSL_OP_NO_RENEGOTIATION);

            // An idle connection holds no OpenSSL read or write buffer.
            LibSsl.SSL_CTX_ctrl(ctx, LibSsl.SSL_CTRL_MODE, LibSsl.SSL_MODE_RELEASE_BUFFERS, 0);
            if (_minVersion != 0 && LibSsl.SSL_CTX_ctrl(ctx, LibSsl.SSL_CTRL_SET_MIN_PROTO_VERSION, _minVersion, 0) != 1
                || _maxVersion != 0 && LibSsl.SSL_CTX_ctrl(ctx, LibSsl.SSL_CTRL_SET_MAX_PROTO_VERSION, _maxVersion, 0) != 1)
            {
                throw new InvalidOperationException(
                    $"TlsServerOptions.EnabledProtocols ({_options.EnabledProtocols}) cannot be set on OpenSSL: {LibSsl.TakeErrors()}");
            }

            fixed (byte* id = s_sessionIdContext)
            {
                // Resumed sessions stay with this endpoint (OpenSSL refuses to resume without one when it asks for certificates).
                LibSsl.SSL_CTX_set_session_id_context(ctx, id, (uint)s_sessionIdContext.Length);
            }

            if (_options.ClientCertificateMode != ClientCertificateMode.NoCertificate)
            {
                // OpenSSL asks for the certificate, and refuses the handshake itself when a required one is missing; the
                // session decides on a sent one during the handshake as SslStream does (VerifyClient), so a refusal reaches
                // the client as OpenSSL's alert.
                int mode = LibSsl.SSL_VERIFY_PEER
                    | (_options.ClientCertificateMode == ClientCertificateMode.RequireCertificate ? LibSsl.SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0);
                LibSsl.SSL_CTX_set_verify(ctx, mode, 0);
                LibSsl.SSL_CTX_set_cert_verify_callback(ctx, (nint)(delegate* unmanaged[Cdecl]<nint, nint, int>)&VerifyClient, 0);
            }

            if (_alpn is not null)
            {
                LibSsl.SSL_CTX_set_alpn_select_cb(ctx, (nint)(delegate* unmanaged[Cdecl]<nint, byte**, byte*, byte*, uint, nint, int>)&SelectAlpn,
                    (nint)Unsafe.AsPointer(ref MemoryMarshal.GetArrayDataReference(_alpn)));
            }

            if (_options.ServerCertificateSelector is not null)
            {
                LibSsl.SSL_CTX_callback_ctrl(ctx, LibSsl.SSL_CTRL_SET_TLSEXT_SERVERNAME_CB, (nint)(delegate* unmanaged[Cdecl]<nint, int*, nint, int>)&OnServerName);
            }

            if (certificate is not null)
            {
                UseCertificate(ctx, certificate);
            }
        }
        catch
        {
            handle.Dispose();
            throw;
        }

        return handle;
    }

    /// <summary>The certificate, its private key (exported as PKCS#8) and the intermediates of its chain.</summary>
    private static void UseCertificate(nint ctx, X509Certificate2 certificate)
    {
        nint x509 = LibSsl.LoadX509(certificate.RawData);
        if (x509 == 0)
        {
            throw new InvalidOperationException($"OpenSSL could not read the certificate '{certificate.Subject}': {LibSsl.TakeErrors()}");
        }

        try
        {
            if (LibSsl.SSL_CTX_use_certificate(ctx, x509) != 1)
            {
                throw new InvalidOperationException($"OpenSSL refused the certificate '{certificate.Subject}': {LibSsl.TakeErrors()}");
            }
        }
        finally
        {
            LibSsl.X509_free(x509);
        }

        byte[] pkcs8 = ExportPrivateKey(certificate);
        try
        {
            nint key;
            fixed (byte* start = pkcs8)
            {
                byte* cursor = start;
                key = LibSsl.d2i_AutoPrivateKey(0, &cursor, pkcs8.Length);
            }

            if (key == 0)
            {
                throw new InvalidOperationException($"OpenSSL could not read the private key of the certificate '{certificate.Subject}': {LibSsl.TakeErrors()}");
            }

            try
            {
                if (LibSsl.SSL_CTX_use_PrivateKey(ctx, key) != 1 || LibSsl.SSL_CTX_check_private_key(ctx) != 1)
                {
                    throw new InvalidOperationException($"OpenSSL refused the private key of the certificate '{certificate.Subject}': {LibSsl.TakeErrors()}");
                }
            }
            finally
            {
                LibSsl.EVP_PKEY_free(key);
            }
        }
        finally
        {
            CryptographicOperations.ZeroMemory(pkcs8);
        }

        AddChain(ctx, certificate);
    }

    private static byte[] ExportPrivateKey(X509Certificate2 certificate)
    {
        try
        {
            using AsymmetricAlgorithm? key = (AsymmetricAlgorithm?)certificate.GetRSAPrivateKey()
                ?? (AsymmetricAlgorithm?)certificate.GetECDsaPrivateKey()
                ?? certificate.GetDSAPrivateKey();
            if (key is null)
            {
                throw new InvalidOperationException(
                    $"The private key of the certificate '{certificate.Subject}' is of a kind the OpenSSL engine cannot load (RSA, ECDSA or DSA only).");
            }

            return key.ExportPkcs8PrivateKey();
        }
        catch (CryptographicException exception)
        {
            // On Linux every key .NET loads from a file or a PFX exports, whatever its X509KeyStorageFlags: this is a key
            // that holds no private half .NET can read (one kept by a hardware module or an OpenSSL provider).
            throw new InvalidOperationException(
                $"The private key of the certificate '{certificate.Subject}' (thumbprint {certificate.Thumbprint}) cannot be exported, which " +
                $"the OpenSSL engine needs to hand it to OpenSSL (a key that stays in its store needs TlsEngine.SslStream, which TlsEngine.Auto falls back to): {exception.Message}", exception);
        }
    }

    /// <summary>Sends the chain as SslStream does: the intermediates the machine finds (offline), not the root.</summary>
    private static void AddChain(nint ctx, X509Certificate2 certificate)
    {
        using var chain = new X509Chain();
        chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        chain.ChainPolicy.VerificationFlags = X509VerificationFlags.AllFlags;
        chain.Build(certificate);
        for (int i = 1; i < chain.ChainElements.Count; i++)
        {
            X509Certificate2 element = chain.ChainElements[i].Certificate;
            if (element.SubjectName.RawData.AsSpan().SequenceEqual(element.IssuerName.RawData))
            {
                break;
            }

            nint x509 = LibSsl.LoadX509(element.RawData);
            if (x509 == 0 || LibSsl.SSL_CTX_ctrl(ctx, LibSsl.SSL_CTRL_CHAIN_CERT, 0, x509) != 1)
            {
                LibSsl.X509_free(x509);
                throw new InvalidOperationException($"OpenSSL refused the chain certificate '{element.Subject}' of '{certificate.Subject}': {LibSsl.TakeErrors()}");
            }

            // SSL_CTX_add0_chain_cert (larg 0) took our reference.
        }

        foreach (X509ChainElement element in chain.ChainElements)
        {
            element.Certificate.Dispose();
        }
    }

    private static (int Min, int Max) VersionRange(SslProtocols protocols)
    {
        if (protocols == SslProtocols.None)
        {
            return (0, 0);
        }

#pragma warning disable CS0618, SYSLIB0039 // Named only to refuse them.
        if ((protocols & (SslProtocols.Ssl2 | SslProtocols.Ssl3)) != 0)
        {
            throw new InvalidOperationException($"TlsServerOptions.EnabledProtocols ({protocols}) asks for SSL 2 or 3, which the OpenSSL engine does not offer.");
        }

        ReadOnlySpan<(SslProtocols Protocol, int Version)> known =
        [
            (SslProtocols.Tls, LibSsl.TLS1_VERSION),
            (SslProtocols.Tls11, LibSsl.TLS1_1_VERSION),
            (SslProtocols.Tls12, LibSsl.TLS1_2_VERSION),
            (SslProtocols.Tls13, LibSsl.TLS1_3_VERSION),
        ];
#pragma warning restore CS0618, SYSLIB0039
        int min = 0;
        int max = 0;
        SslProtocols covered = SslProtocols.None;
        foreach ((SslProtocols protocol, int version) in known)
        {
            if ((protocols & protocol) != 0)
            {
                min = min == 0 ? version : min;
                max = version;
                covered |= protocol;
            }
            else if (min != 0 && (protocols & ~covered) != 0)
            {
                throw new InvalidOperationException(
                    $"TlsServerOptions.EnabledProtocols ({protocols}) leaves a gap between versions, which the OpenSSL engine cannot express (a range from lowest to highest).");
            }
        }

        if (covered != protocols)
        {
            throw new InvalidOperationException($"TlsServerOptions.EnabledProtocols ({protocols}) names a protocol the OpenSSL engine does not know.");
        }

        return (min, max);
    }

    private static byte[]? WireFormat(IList<SslApplicationProtocol> protocols)
    {
        if (protocols.Count == 0)
        {
            return null;
        }

        int length = 0;
        foreach (SslApplicationProtocol protocol in protocols)
        {
            length += 1 + protocol.Protocol.Length;
        }

        byte[] wire = GC.AllocateArray<byte>(sizeof(int) + length, pinned: true);
        MemoryMarshal.Write(wire, length);
        int at = sizeof(int);
        foreach (SslApplicationProtocol protocol in protocols)
        {
            wire[at++] = (byte)protocol.Protocol.Length;
            protocol.Protocol.Span.CopyTo(wire.AsSpan(at));
            at += protocol.Protocol.Length;
        }

        return wire;
    }

    /// <summary>
    /// Certificate verification, in place of OpenSSL's own: the session of the handshake decides on the client's
    /// certificate. A refusal is recorded as X509_V_ERR_CERT_REJECTED, which OpenSSL answers with the bad_certificate alert.
    /// </summary>
    [UnmanagedCallersOnly(CallConvs = [typeof(CallConvCdecl)])]
    private static int VerifyClient(nint storeContext, nint arg)
    {
        nint ssl = LibSsl.X509_STORE_CTX_get_ex_data(storeContext, LibSsl.SSL_get_ex_data_X509_STORE_CTX_idx());
        OpenSslSession? session = ssl == 0 ? null : OpenSslSession.FromSsl(ssl);
        if (session is not null && session.VerifyClientCertificate(storeContext))
        {
            return 1;
        }

        LibSsl.X509_STORE_CTX_set_error(storeContext, LibSsl.X509_V_ERR_CERT_REJECTED);
        return 0;
    }

    /// <summary>
    /// ALPN: the first of the server's protocols (in its order) the client offers. None in common fails the handshake with
    /// no_application_protocol, as SslStream does.
    /// </summary>
    [UnmanagedCallersOnly(CallConvs = [typeof(CallConvCdecl)])]
    private static int SelectAlpn(nint ssl, byte** output, byte* outputLength, byte* client, uint clientLength, nint arg)
    {
        byte* server = (byte*)arg;
        uint serverLength = (uint)*(int*)server;
        return LibSsl.SSL_select_next_proto(output, outputLength, server + sizeof(int), serverLength, client, clientLength) == LibSsl.OPENSSL_NPN_NEGOTIATED
            ? LibSsl.SSL_TLSEXT_ERR_OK
            : LibSsl.SSL_TLSEXT_ERR_ALERT_FATAL;
    }

    /// <summary>SNI: the session of <paramref name="ssl"/> picks the certificate for the host name; none refuses with unrecognized_name.</summary>
    [UnmanagedCallersOnly(CallConvs = [typeof(CallConvCdecl)])]
    private static int OnServerName(nint ssl, int* alert, nint arg)
    {
        // SelectCertificate catches what the selector throws: nothing may unwind through OpenSSL's frames.
        OpenSslSession? session = OpenSslSession.FromSsl(ssl);
        if (session is null || !session.SelectCertificate(ssl))
        {
            *alert = LibSsl.SSL_AD_UNRECOGNIZED_NAME;
            return LibSsl.SSL_TLSEXT_ERR_ALERT_FATAL;
        }

        return LibSsl.SSL_TLSEXT_ERR_OK;
    }
}
