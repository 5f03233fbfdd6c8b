using System;
using System.Runtime.InteropServices;
using System.Text;

namespace Falconet.Transport.Tls.OpenSsl;

/// <summary>
/// The calls of OpenSSL 3 (<c>libssl.so.3</c>, <c>libcrypto.so.3</c>) the OpenSSL engine makes, and the constants of its
/// headers it needs (macros in C: the <c>SSL_CTX_ctrl</c> commands behind them are called here).
/// </summary>
internal static unsafe partial class LibSsl
{
    private const string Ssl = "libssl.so.3";
    private const string Crypto = "libcrypto.so.3";

    // ---- ssl.h / tls1.h / bio.h constants ----
    public const int SSL_ERROR_NONE = 0;
    public const int SSL_ERROR_SSL = 1;
    public const int SSL_ERROR_WANT_READ = 2;
    public const int SSL_ERROR_WANT_WRITE = 3;
    public const int SSL_ERROR_SYSCALL = 5;
    public const int SSL_ERROR_ZERO_RETURN = 6;

    public const int SSL_CTRL_MODE = 33;
    public const int SSL_CTRL_SET_TLSEXT_SERVERNAME_CB = 53;
    public const int SSL_CTRL_SET_TLSEXT_SERVERNAME_ARG = 54;
    public const int SSL_CTRL_CHAIN_CERT = 89;
    public const int SSL_CTRL_SET_MIN_PROTO_VERSION = 123;
    public const int SSL_CTRL_SET_MAX_PROTO_VERSION = 124;

    public const ulong SSL_OP_NO_RENEGOTIATION = 1UL << 30;
    public const long SSL_MODE_RELEASE_BUFFERS = 0x10;

    public const int SSL_VERIFY_NONE = 0;
    public const int SSL_VERIFY_PEER = 1;
    public const int SSL_VERIFY_FAIL_IF_NO_PEER_CERT = 2;

    /// <summary>x509_vfy.h: the certificate was refused; OpenSSL answers it with the bad_certificate alert.</summary>
    public const int X509_V_ERR_CERT_REJECTED = 28;

    /// <summary>sslerr.h: the reason OpenSSL records when a required client certificate was not sent.</summary>
    public const int SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE = 199;

    public const int SSL_TLSEXT_ERR_OK = 0;
    public const int SSL_TLSEXT_ERR_ALERT_FATAL = 2;
    public const int SSL_TLSEXT_ERR_NOACK = 3;
    public const int SSL_AD_UNRECOGNIZED_NAME = 112;
    public const int TLSEXT_NAMETYPE_host_name = 0;
    public const int OPENSSL_NPN_NEGOTIATED = 1;

    public const int TLS1_VERSION = 0x0301;
    public const int TLS1_1_VERSION = 0x0302;
    public const int TLS1_2_VERSION = 0x0303;
    public const int TLS1_3_VERSION = 0x0304;

    public const int BIO_TYPE_SOURCE_SINK = 0x0400;
    public const int BIO_CTRL_FLUSH = 11;
    public const int BIO_FLAGS_READ = 0x01;
    public const int BIO_FLAGS_WRITE = 0x02;
    public const int BIO_FLAGS_IO_SPECIAL = 0x04;
    public const int BIO_FLAGS_SHOULD_RETRY = 0x08;

    // ---- SSL_CTX ----
    [LibraryImport(Ssl)]
    public static partial nint TLS_server_method();

    [LibraryImport(Ssl)]
    public static partial nint SSL_CTX_new(nint method);

    [LibraryImport(Ssl)]
    public static partial void SSL_CTX_free(nint ctx);

    [LibraryImport(Ssl)]
    public static partial ulong SSL_CTX_set_options(nint ctx, ulong options);

    [LibraryImport(Ssl)]
    public static partial long SSL_CTX_ctrl(nint ctx, int command, long larg, nint parg);

    [LibraryImport(Ssl)]
    public static partial long SSL_CTX_callback_ctrl(nint ctx, int command, nint callback);

    [LibraryImport(Ssl)]
    public static partial int SSL_CTX_use_certificate(nint ctx, nint x509);

    [LibraryImport(Ssl)]
    public static partial int SSL_CTX_use_PrivateKey(nint ctx, nint pkey);

    [LibraryImport(Ssl)]
    public static partial int SSL_CTX_check_private_key(nint ctx);

    [LibraryImport(Ssl)]
    public static partial void SSL_CTX_set_alpn_select_cb(nint ctx, nint callback, nint arg);

    [LibraryImport(Ssl)]
    public static partial void SSL_CTX_set_verify(nint ctx, int mode, nint callback);

    [LibraryImport(Ssl)]
    public static partial void SSL_CTX_set_cert_verify_callback(nint ctx, nint callback, nint arg);

    [LibraryImport(Ssl)]
    public static partial int SSL_get_ex_data_X509_STORE_CTX_idx();

    [LibraryImport(Crypto)]
    public static partial nint X509_STORE_CTX_get_ex_data(nint storeContext, int index);

    [LibraryImport(Crypto)]
    public static partial nint X509_STORE_CTX_get0_cert(nint storeContext);

    [LibraryImport(Crypto)]
    public static partial nint X509_STORE_CTX_get0_untrusted(nint storeContext);

    [LibraryImport(Crypto)]
    public static partial void X509_STORE_CTX_set_error(nint storeContext, int error);

    [LibraryImport(Ssl)]
    public static partial int SSL_CTX_set_session_id_context(nint ctx, byte* context, uint length);

    [LibraryImport(Ssl)]
    public static partial int SSL_select_next_proto(byte** output, byte* outputLength, byte* server, uint serverLength, byte* client, uint clientLength);

    // ---- SSL ----
    [LibraryImport(Ssl)]
    public static partial nint SSL_new(nint ctx);

    [LibraryImport(Ssl)]
    public static partial void SSL_free(nint ssl);

    [LibraryImport(Ssl)]
    public static partial void SSL_set_accept_state(nint ssl);

    [LibraryImport(Ssl)]
    public static partial void SSL_set_bio(nint ssl, nint readBio, nint writeBio);

    [LibraryImport(Ssl)]
    public static partial nint SSL_get_rbio(nint ssl);

    [LibraryImport(Ssl)]
    public static partial int SSL_do_handshake(nint ssl);

    [LibraryImport(Ssl)]
    public static partial int SSL_read_ex(nint ssl, byte* buffer, nuint count, nuint* read);

    [LibraryImport(Ssl)]
    public static partial int SSL_write_ex(nint ssl, byte* buffer, nuint count, nuint* written);

    [LibraryImport(Ssl)]
    public static partial int SSL_shutdown(nint ssl);

    [LibraryImport(Ssl)]
    public static partial int SSL_get_error(nint ssl, int result);

    [LibraryImport(Ssl)]
    public static partial int SSL_version(nint ssl);

    [LibraryImport(Ssl)]
    public static partial nint SSL_get_current_cipher(nint ssl);

    [LibraryImport(Ssl)]
    public static partial ushort SSL_CIPHER_get_protocol_id(nint cipher);

    [LibraryImport(Ssl)]
    public static partial nint SSL_get_servername(nint ssl, int type);

    [LibraryImport(Ssl)]
    public static partial void SSL_get0_alpn_selected(nint ssl, byte** data, uint* length);

    [LibraryImport(Ssl)]
    public static partial nint SSL_get1_peer_certificate(nint ssl);

    [LibraryImport(Ssl)]
    public static partial nint SSL_get_peer_cert_chain(nint ssl);

    [LibraryImport(Ssl)]
    public static partial nint SSL_set_SSL_CTX(nint ssl, nint ctx);

    // ---- BIO ----
    [LibraryImport(Crypto)]
    public static partial int BIO_get_new_index();

    [LibraryImport(Crypto, StringMarshalling = StringMarshalling.Utf8)]
    public static partial nint BIO_meth_new(int type, string name);

    [LibraryImport(Crypto)]
    public static partial int BIO_meth_set_write(nint method, nint write);

    [LibraryImport(Crypto)]
    public static partial int BIO_meth_set_read(nint method, nint read);

    [LibraryImport(Crypto)]
    public static partial int BIO_meth_set_ctrl(nint method, nint ctrl);

    [LibraryImport(Crypto)]
    public static partial nint BIO_new(nint method);

    [LibraryImport(Crypto)]
    public static partial void BIO_set_data(nint bio, nint data);

    [LibraryImport(Crypto)]
    public static partial nint BIO_get_data(nint bio);

    [LibraryImport(Crypto)]
    public static partial void BIO_set_init(nint bio, int init);

    [LibraryImport(Crypto)]
    public static partial void BIO_set_flags(nint bio, int flags);

    [LibraryImport(Crypto)]
    public static partial void BIO_clear_flags(nint bio, int flags);

    // ---- X509, keys, errors ----
    [LibraryImport(Crypto)]
    public static partial nint d2i_X509(nint reuse, byte** input, long length);

    [LibraryImport(Crypto)]
    public static partial int i2d_X509(nint x509, byte** output);

    [LibraryImport(Crypto)]
    public static partial void X509_free(nint x509);

    [LibraryImport(Crypto)]
    public static partial nint d2i_AutoPrivateKey(nint reuse, byte** input, long length);

    [LibraryImport(Crypto)]
    public static partial void EVP_PKEY_free(nint key);

    [LibraryImport(Crypto)]
    public static partial int OPENSSL_sk_num(nint stack);

    [LibraryImport(Crypto)]
    public static partial nint OPENSSL_sk_value(nint stack, int index);

    [LibraryImport(Crypto)]
    public static partial ulong ERR_get_error();

    [LibraryImport(Crypto)]
    public static partial void ERR_clear_error();

    [LibraryImport(Crypto)]
    public static partial ulong ERR_peek_error();

    /// <summary>err.h's ERR_GET_REASON: the reason code of a packed error (its low 23 bits in OpenSSL 3).</summary>
    public static int ERR_GET_REASON(ulong error) => (int)(error & 0x7FFFFF);

    [LibraryImport(Crypto)]
    public static partial void ERR_error_string_n(ulong error, byte* buffer, nuint length);

    /// <summary>The errors on this thread's OpenSSL error queue as one line (the queue is left empty).</summary>
    public static string TakeErrors()
    {
        var text = new StringBuilder();
        byte* buffer = stackalloc byte[256];
        for (ulong error = ERR_get_error(); error != 0; error = ERR_get_error())
        {
            ERR_error_string_n(error, buffer, 256);
            if (text.Length > 0)
            {
                text.Append("; ");
            }

            text.Append(Marshal.PtrToStringUTF8((nint)buffer));
        }

        return text.Length == 0 ? "no detail from OpenSSL" : text.ToString();
    }

    /// <summary>The certificate's DER bytes as an OpenSSL X509 (freed by the caller).</summary>
    public static nint LoadX509(ReadOnlySpan<byte> der)
    {
        fixed (byte* start = der)
        {
            byte* cursor = start;
            return d2i_X509(0, &cursor, der.Length);
        }
    }

    /// <summary>The DER bytes of an OpenSSL X509.</summary>
    public static byte[] ExportX509(nint x509)
    {
        int length = i2d_X509(x509, null);
        if (length <= 0)
        {
            throw new InvalidOperationException("OpenSSL could not encode a certificate: " + TakeErrors());
        }

        byte[] der = new byte[length];
        fixed (byte* start = der)
        {
            byte* cursor = start;
            i2d_X509(x509, &cursor);
        }

        return der;
    }
}
