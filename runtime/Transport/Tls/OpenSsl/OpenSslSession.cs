using System;
using System.IO;
using System.Net.Security;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using System.Threading;
using Falconet.Server;

namespace Falconet.Transport.Tls.OpenSsl;

/// <summary>
/// The OpenSSL engine's protocol state of one connection: an <c>SSL</c> whose BIO is the connection's record stream. The
/// BIO's write callback appends the records OpenSSL produces to the connection's pool blocks (the one copy of a send);
/// its read callback hands OpenSSL the ciphertext received into a pool block, and says "retry" when none waits, so a
/// call that needs the peer returns at once and the connection receives before calling again.
/// </summary>
/// <remarks>
/// Every call on the <c>SSL</c> runs under one lock (uncontended but for HTTP/2, which receives and sends at once); output
/// OpenSSL writes during a read (a KeyUpdate's answer, an alert) joins the queue of records in the order it was made.
/// The error queue of OpenSSL is per thread and read only after a failure, then emptied: a call that needs the peer is
/// recognized by the BIO's own retry, not by the queue, so the hot path never clears it.
/// </remarks>
internal sealed unsafe class OpenSslSession : IDisposable
{
    private static readonly nint s_bioMethod = CreateBioMethod();

    private readonly OpenSslServerContext _context;
    private readonly TlsTransportStream _records;
    private readonly SafeSslHandle _ssl;
    private readonly Lock _gate = new();
    private GCHandle _self;
    private bool _bioWantsRead;
    private bool _bioRetryFlagged;
    private bool _wroteOutput;
    private bool _waitingForRecords;
    private bool _handshakeDone;
    private int _disposed;

    // What the selector threw during the SNI callback (the handshake fails with it).
    private Exception? _selectorFailure;

    // The client certificate decided on during the handshake: accepted (kept until the connection takes it), or refused.
    private X509Certificate2? _clientCertificate;
    private bool _clientCertificateVerified;
    private string? _refusedSubject;
    private Exception? _validationFailure;

    public OpenSslSession(OpenSslServerContext context, TlsTransportStream records)
    {
        _context = context;
        _records = records;
        _ssl = context.NewSession();
        _self = GCHandle.Alloc(this);
        nint bio = LibSsl.BIO_new(s_bioMethod);
        if (bio == 0)
        {
            _self.Free();
            _ssl.Dispose();
            throw new InvalidOperationException("OpenSSL could not create a BIO: " + LibSsl.TakeErrors());
        }

        LibSsl.BIO_set_data(bio, GCHandle.ToIntPtr(_self));
        LibSsl.BIO_set_init(bio, 1);

        // One BIO for both directions: the SSL takes the one reference and frees it with itself.
        LibSsl.SSL_set_bio(_ssl.DangerousGetHandle(), bio, bio);
    }

    /// <summary>True when the SNI host name found no certificate (the client got unrecognized_name).</summary>
    public bool UnknownServerName { get; private set; }

    /// <summary>True when the client certificate was missing or refused.</summary>
    public bool ClientCertificateRejected { get; private set; }

    /// <summary>Set while the connection receives ciphertext into its pool block: the BIO then has nothing to hand OpenSSL.</summary>
    public bool WaitingForRecords
    {
        get => Volatile.Read(ref _waitingForRecords);
        set => Volatile.Write(ref _waitingForRecords, value);
    }

    /// <summary>The session whose <c>SSL</c> is <paramref name="ssl"/> (through its BIO), in OpenSSL's callbacks.</summary>
    public static OpenSslSession? FromSsl(nint ssl) => FromBio(LibSsl.SSL_get_rbio(ssl));

    private static OpenSslSession? FromBio(nint bio)
    {
        nint data = bio == 0 ? 0 : LibSsl.BIO_get_data(bio);
        return data == 0 ? null : GCHandle.FromIntPtr(data).Target as OpenSslSession;
    }

    /// <summary>
    /// One step of the handshake: true once complete, false when OpenSSL needs more of the peer's records (what it wrote
    /// is queued on the record stream). Throws <see cref="AuthenticationException"/> when the handshake failed.
    /// </summary>
    public bool Handshake()
    {
        lock (_gate)
        {
            ObjectDisposedException.ThrowIf(_disposed != 0, this);
            LibSsl.ERR_clear_error();
            _bioWantsRead = false;
            int result = LibSsl.SSL_do_handshake(_ssl.DangerousGetHandle());
            if (result == 1)
            {
                _handshakeDone = true;
                return true;
            }

            if (_bioWantsRead)
            {
                LibSsl.ERR_clear_error();
                return false;
            }

            int error = LibSsl.SSL_get_error(_ssl.DangerousGetHandle(), result);
            ulong firstError = LibSsl.ERR_peek_error();
            string detail = LibSsl.TakeErrors();
            if (_selectorFailure is { } failure)
            {
                throw new AuthenticationException("The server certificate selector failed: " + failure.Message, failure);
            }

            if (ClientCertificateRejected || LibSsl.ERR_GET_REASON(firstError) == LibSsl.SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE)
            {
                // Refused in the verification callback, or none sent where required: OpenSSL sent the alert.
                ClientCertificateRejected = true;
                throw ClientCertificateRefused();
            }

            if (UnknownServerName)
            {
                throw new AuthenticationException($"No certificate serves the host name the client asked for ({detail}).");
            }

            throw error == LibSsl.SSL_ERROR_SYSCALL && _records.EndOfStream
                ? new IOException("The peer closed the connection during the TLS handshake.")
                : new AuthenticationException($"The TLS handshake failed (OpenSSL error {error}: {detail}).");
        }
    }

    /// <summary>
    /// Decrypts into <paramref name="buffer"/>: the count of plaintext bytes, 0 at the end (close_notify, or the peer's FIN),
    /// or -1 when OpenSSL needs more of the peer's records. Output OpenSSL wrote meanwhile is queued; the caller sends it.
    /// </summary>
    public int Read(Span<byte> buffer)
    {
        lock (_gate)
        {
            ObjectDisposedException.ThrowIf(_disposed != 0, this);
            _bioWantsRead = false;
            _wroteOutput = false;
            nuint read;
            int result;
            fixed (byte* start = buffer)
            {
                result = LibSsl.SSL_read_ex(_ssl.DangerousGetHandle(), start, (nuint)buffer.Length, &read);
            }

            if (result == 1)
            {
                return (int)read;
            }

            if (_bioWantsRead)
            {
                return -1;
            }

            int error = LibSsl.SSL_get_error(_ssl.DangerousGetHandle(), result);
            if (error == LibSsl.SSL_ERROR_WANT_READ)
            {
                // A record that carried no data (a post-handshake message) with nothing after it, reported without the BIO.
                LibSsl.ERR_clear_error();
                return -1;
            }

            if (error == LibSsl.SSL_ERROR_ZERO_RETURN || _records.EndOfStream)
            {
                // close_notify, or a FIN without it: the end of the stream either way, as SslStream reads it.
                LibSsl.ERR_clear_error();
                return 0;
            }

            throw new IOException($"TLS read failed (OpenSSL error {error}: {LibSsl.TakeErrors()}).");
        }
    }

    /// <summary>True when the last <see cref="Read"/> made OpenSSL write records (a KeyUpdate's answer, a session ticket, an alert).</summary>
    public bool WroteOutput => _wroteOutput;

    /// <summary>Encrypts <paramref name="plaintext"/> into records appended to the record stream (as many as it takes).</summary>
    public void Write(ReadOnlySpan<byte> plaintext)
    {
        lock (_gate)
        {
            ObjectDisposedException.ThrowIf(_disposed != 0, this);
            nuint written;
            int result;
            fixed (byte* start = plaintext)
            {
                result = LibSsl.SSL_write_ex(_ssl.DangerousGetHandle(), start, (nuint)plaintext.Length, &written);
            }

            if (result != 1)
            {
                int error = LibSsl.SSL_get_error(_ssl.DangerousGetHandle(), result);
                throw new IOException($"TLS write failed (OpenSSL error {error}: {LibSsl.TakeErrors()}).");
            }
        }
    }

    /// <summary>Writes close_notify to the record stream (the caller sends it); nothing after a failed session.</summary>
    public void Shutdown()
    {
        lock (_gate)
        {
            if (_disposed != 0 || !_handshakeDone)
            {
                return;
            }

            if (LibSsl.SSL_shutdown(_ssl.DangerousGetHandle()) < 0)
            {
                LibSsl.ERR_clear_error();
            }
        }
    }

    /// <summary>What the handshake negotiated; the client certificate validated by <see cref="ValidateClientCertificate"/>.</summary>
    public TlsConnectionInfo Info(X509Certificate2? clientCertificate)
    {
        lock (_gate)
        {
            nint ssl = _ssl.DangerousGetHandle();
            SslProtocols protocol = LibSsl.SSL_version(ssl) switch
            {
                LibSsl.TLS1_3_VERSION => SslProtocols.Tls13,
                LibSsl.TLS1_2_VERSION => SslProtocols.Tls12,
#pragma warning disable CS0618, SYSLIB0039 // Reported as negotiated, where the options enabled them.
                LibSsl.TLS1_1_VERSION => SslProtocols.Tls11,
                LibSsl.TLS1_VERSION => SslProtocols.Tls,
#pragma warning restore CS0618, SYSLIB0039
                _ => SslProtocols.None,
            };
            nint cipher = LibSsl.SSL_get_current_cipher(ssl);
            var suite = (TlsCipherSuite)(cipher == 0 ? 0 : LibSsl.SSL_CIPHER_get_protocol_id(cipher));
            string? hostName = HostName(ssl);
            byte* alpn;
            uint alpnLength;
            LibSsl.SSL_get0_alpn_selected(ssl, &alpn, &alpnLength);
            SslApplicationProtocol application = alpnLength == 0 ? default : KnownProtocol(new ReadOnlySpan<byte>(alpn, (int)alpnLength));
            return new TlsConnectionInfo(protocol, suite, hostName, application, clientCertificate);
        }
    }

    /// <summary>
    /// The certificate verification callback's work, during the handshake: decides on the client's certificate (the leaf
    /// of <paramref name="storeContext"/>, with the certificates it sent) as the SslStream engine does, so that a refusal
    /// fails the handshake with OpenSSL's alert. Catches everything: nothing may unwind through OpenSSL's frames.
    /// </summary>
    public bool VerifyClientCertificate(nint storeContext)
    {
        X509Certificate2? certificate = null;
        try
        {
            certificate = X509CertificateLoader.LoadCertificate(LibSsl.ExportX509(LibSsl.X509_STORE_CTX_get0_cert(storeContext)));
            if (Accepts(certificate, LibSsl.X509_STORE_CTX_get0_untrusted(storeContext)))
            {
                _clientCertificate?.Dispose();
                _clientCertificate = certificate;
                _clientCertificateVerified = true;
                return true;
            }
        }
        catch (Exception exception)
        {
            _validationFailure = exception;
        }

        _refusedSubject = certificate?.Subject;
        certificate?.Dispose();
        ClientCertificateRejected = true;
        return false;
    }

    /// <summary>
    /// The client certificate once the handshake completed: the one accepted during it, or, when no verification ran (a
    /// resumed session, or none sent where that is allowed), the session's peer certificate decided on now, the same way.
    /// </summary>
    /// <exception cref="AuthenticationException">A resumed session's certificate was refused.</exception>
    public X509Certificate2? ValidateClientCertificate()
    {
        if (_context.Options.ClientCertificateMode == ClientCertificateMode.NoCertificate)
        {
            return null;
        }

        if (_clientCertificateVerified)
        {
            X509Certificate2? verified = _clientCertificate;
            _clientCertificate = null;
            return verified;
        }

        X509Certificate2? certificate;
        bool accepted;
        lock (_gate)
        {
            nint ssl = _ssl.DangerousGetHandle();
            nint peer = LibSsl.SSL_get1_peer_certificate(ssl);
            if (peer == 0)
            {
                certificate = null;
            }
            else
            {
                try
                {
                    certificate = X509CertificateLoader.LoadCertificate(LibSsl.ExportX509(peer));
                }
                finally
                {
                    LibSsl.X509_free(peer);
                }
            }

            // On a server the stack holds the certificates after the client's own.
            accepted = Accepts(certificate, LibSsl.SSL_get_peer_cert_chain(ssl));
        }

        if (!accepted)
        {
            ClientCertificateRejected = true;
            _refusedSubject = certificate?.Subject;
            certificate?.Dispose();
            throw ClientCertificateRefused();
        }

        return certificate;
    }

    /// <summary>
    /// The SslStream engine's decision: the chain built by the system with the certificates the client sent (the OpenSSL
    /// <paramref name="sentStack"/>), no revocation check, for client authentication; then the endpoint's callback, or no
    /// chain error. No certificate is accepted only where it is allowed.
    /// </summary>
    private bool Accepts(X509Certificate2? certificate, nint sentStack)
    {
        TlsServerOptions options = _context.Options;
        if (certificate is null)
        {
            return options.ClientCertificateMode == ClientCertificateMode.AllowCertificate;
        }

        X509Certificate2Collection sent = [];
        try
        {
            int count = sentStack == 0 ? 0 : LibSsl.OPENSSL_sk_num(sentStack);
            for (int i = 0; i < count; i++)
            {
                sent.Add(X509CertificateLoader.LoadCertificate(LibSsl.ExportX509(LibSsl.OPENSSL_sk_value(sentStack, i))));
            }

            using var chain = new X509Chain();
            chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
            chain.ChainPolicy.ApplicationPolicy.Add(new System.Security.Cryptography.Oid("1.3.6.1.5.5.7.3.2"));
            chain.ChainPolicy.ExtraStore.AddRange(sent);
            SslPolicyErrors errors = chain.Build(certificate) ? SslPolicyErrors.None : SslPolicyErrors.RemoteCertificateChainErrors;
            return options.ClientCertificateValidation is { } validate ? validate(certificate, chain, errors) : errors == SslPolicyErrors.None;
        }
        finally
        {
            foreach (X509Certificate2 extra in sent)
            {
                extra.Dispose();
            }
        }
    }

    /// <summary>Why the client certificate was refused, for the handshake's failure.</summary>
    private AuthenticationException ClientCertificateRefused() =>
        _validationFailure is { } failure
            ? new AuthenticationException("The client certificate validation failed: " + failure.Message, failure)
            : _refusedSubject is null
            ? new AuthenticationException("The client sent no certificate, and the endpoint requires one.")
            : new AuthenticationException($"The client certificate '{_refusedSubject}' was refused.");

    /// <summary>The SNI callback's work: the selector's certificate for the host name, or none (false).</summary>
    public bool SelectCertificate(nint ssl)
    {
        try
        {
            if (_context.Select(ssl, HostName(ssl)))
            {
                return true;
            }

            UnknownServerName = true;
            return false;
        }
        catch (Exception exception)
        {
            _selectorFailure = exception;
            return false;
        }
    }

    private static string? HostName(nint ssl)
    {
        nint name = LibSsl.SSL_get_servername(ssl, LibSsl.TLSEXT_NAMETYPE_host_name);
        return name == 0 ? null : Marshal.PtrToStringUTF8(name) is { Length: > 0 } text ? text : null;
    }

    private static SslApplicationProtocol KnownProtocol(ReadOnlySpan<byte> name) =>
        name.SequenceEqual(SslApplicationProtocol.Http11.Protocol.Span) ? SslApplicationProtocol.Http11
        : name.SequenceEqual(SslApplicationProtocol.Http2.Protocol.Span) ? SslApplicationProtocol.Http2
        : new SslApplicationProtocol(name.ToArray());

    /// <summary>Frees the <c>SSL</c> (and its BIO) once; no call on it runs then (the connection is idle).</summary>
    public void Dispose()
    {
        lock (_gate)
        {
            if (Interlocked.Exchange(ref _disposed, 1) != 0)
            {
                return;
            }

            _ssl.Dispose();
            _self.Free();
            _clientCertificate?.Dispose();
            _clientCertificate = null;
        }
    }

    // ---- The BIO: OpenSSL's I/O, on the thread of the SSL call, under the session's lock ----

    private static nint CreateBioMethod()
    {
        nint method = LibSsl.BIO_meth_new(LibSsl.BIO_get_new_index() | LibSsl.BIO_TYPE_SOURCE_SINK, "falconet-records");
        if (method == 0
            || LibSsl.BIO_meth_set_write(method, (nint)(delegate* unmanaged[Cdecl]<nint, byte*, int, int>)&BioWrite) != 1
            || LibSsl.BIO_meth_set_read(method, (nint)(delegate* unmanaged[Cdecl]<nint, byte*, int, int>)&BioRead) != 1
            || LibSsl.BIO_meth_set_ctrl(method, (nint)(delegate* unmanaged[Cdecl]<nint, int, long, nint, long>)&BioControl) != 1)
        {
            throw new InvalidOperationException("OpenSSL could not create the BIO method: " + LibSsl.TakeErrors());
        }

        // Lives as long as the process: every connection's BIO uses it.
        return method;
    }

    /// <summary>Records OpenSSL produced: appended to the connection's pool blocks, always whole.</summary>
    [UnmanagedCallersOnly(CallConvs = [typeof(CallConvCdecl)])]
    private static int BioWrite(nint bio, byte* data, int length)
    {
        if (BioCall(bio, length) is not { } session)
        {
            return -1;
        }

        try
        {
            session._records.Write(new ReadOnlySpan<byte>(data, length));
            session._wroteOutput = true;
            return length;
        }
        catch (Exception)
        {
            // The record stream is gone (the connection closed): OpenSSL sees a failed write.
            return -1;
        }
    }

    /// <summary>Ciphertext for OpenSSL from the received pool block; "retry" when none waits; 0 at the peer's FIN.</summary>
    [UnmanagedCallersOnly(CallConvs = [typeof(CallConvCdecl)])]
    private static int BioRead(nint bio, byte* destination, int length)
    {
        if (BioCall(bio, length) is not { } session)
        {
            return -1;
        }

        int taken;
        try
        {
            taken = Volatile.Read(ref session._waitingForRecords) ? -1 : session._records.TakeReceived(new Span<byte>(destination, length));
        }
        catch (Exception)
        {
            // Never through OpenSSL's frames (that would end the process): OpenSSL sees a failed read, the connection fails.
            return -1;
        }

        if (taken < 0)
        {
            session._bioWantsRead = true;
            session._bioRetryFlagged = true;
            LibSsl.BIO_set_flags(bio, LibSsl.BIO_FLAGS_READ | LibSsl.BIO_FLAGS_SHOULD_RETRY);
        }

        return taken;
    }

    /// <summary>
    /// The start of a read or write callback: the BIO's session (null: fail the call), the retry flags of an earlier call
    /// cleared. Only the read callback sets them, and it says so: the common call makes no second native call.
    /// </summary>
    private static OpenSslSession? BioCall(nint bio, int length)
    {
        OpenSslSession? session = FromBio(bio);
        if (session is null || session._bioRetryFlagged)
        {
            LibSsl.BIO_clear_flags(bio, LibSsl.BIO_FLAGS_READ | LibSsl.BIO_FLAGS_WRITE | LibSsl.BIO_FLAGS_IO_SPECIAL | LibSsl.BIO_FLAGS_SHOULD_RETRY);
            if (session is not null)
            {
                session._bioRetryFlagged = false;
            }
        }

        return length < 0 ? null : session;
    }

    [UnmanagedCallersOnly(CallConvs = [typeof(CallConvCdecl)])]
    private static long BioControl(nint bio, int command, long larg, nint parg) => command == LibSsl.BIO_CTRL_FLUSH ? 1 : 0;
}
