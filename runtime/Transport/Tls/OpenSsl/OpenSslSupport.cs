using System;
using System.Runtime.InteropServices;

namespace Falconet.Transport.Tls.OpenSsl;

/// <summary>
/// Whether the OpenSSL engine can run in this process: Linux, with <c>libssl.so.3</c> and <c>libcrypto.so.3</c> that load
/// and export every function <see cref="LibSsl"/> calls. Checked once, the first time an endpoint asks.
/// </summary>
internal static class OpenSslSupport
{
    /// <summary>The environment variable that turns the OpenSSL engine off for <see cref="Falconet.Server.TlsEngine.Auto"/> ("0").</summary>
    public const string SwitchVariable = "FALCONET_TLS_OPENSSL";

    /// <summary>The functions of <c>libssl.so.3</c> that <see cref="LibSsl"/> calls (a test keeps this list in step with it).</summary>
    internal static readonly string[] SslFunctions =
    [
        "TLS_server_method", "SSL_CTX_new", "SSL_CTX_free", "SSL_CTX_set_options", "SSL_CTX_ctrl", "SSL_CTX_callback_ctrl",
        "SSL_CTX_use_certificate", "SSL_CTX_use_PrivateKey", "SSL_CTX_check_private_key", "SSL_CTX_set_alpn_select_cb",
        "SSL_CTX_set_verify", "SSL_CTX_set_cert_verify_callback", "SSL_get_ex_data_X509_STORE_CTX_idx",
        "SSL_CTX_set_session_id_context", "SSL_select_next_proto", "SSL_new", "SSL_free", "SSL_set_accept_state", "SSL_set_bio",
        "SSL_get_rbio", "SSL_do_handshake", "SSL_read_ex", "SSL_write_ex", "SSL_shutdown", "SSL_get_error", "SSL_version",
        "SSL_get_current_cipher", "SSL_CIPHER_get_protocol_id", "SSL_get_servername", "SSL_get0_alpn_selected",
        "SSL_get1_peer_certificate", "SSL_get_peer_cert_chain", "SSL_set_SSL_CTX",
    ];

    /// <summary>The functions of <c>libcrypto.so.3</c> that <see cref="LibSsl"/> calls (a test keeps this list in step with it).</summary>
    internal static readonly string[] CryptoFunctions =
    [
        "X509_STORE_CTX_get_ex_data", "X509_STORE_CTX_get0_cert", "X509_STORE_CTX_get0_untrusted", "X509_STORE_CTX_set_error",
        "BIO_get_new_index", "BIO_meth_new", "BIO_meth_set_write", "BIO_meth_set_read", "BIO_meth_set_ctrl", "BIO_new",
        "BIO_set_data", "BIO_get_data", "BIO_set_init", "BIO_set_flags", "BIO_clear_flags", "d2i_X509", "i2d_X509", "X509_free",
        "d2i_AutoPrivateKey", "EVP_PKEY_free", "OPENSSL_sk_num", "OPENSSL_sk_value", "ERR_get_error", "ERR_clear_error",
        "ERR_peek_error", "ERR_error_string_n",
    ];

    private static readonly Lazy<string?> s_unavailableReason = new(FindUnavailableReason);

    /// <summary>Null when the engine can run here; otherwise why not, as a clause ("libssl.so.3 cannot be loaded ...").</summary>
    public static string? UnavailableReason => s_unavailableReason.Value;

    /// <summary>
    /// Null unless the operator turned the engine off for <see cref="Falconet.Server.TlsEngine.Auto"/> with
    /// <c>FALCONET_TLS_OPENSSL=0</c>; then the clause that says so. Read at every start.
    /// </summary>
    public static string? SwitchedOffReason => SwitchedOff(Environment.GetEnvironmentVariable(SwitchVariable));

    /// <summary>The clause for a value of <c>FALCONET_TLS_OPENSSL</c>: only "0" turns the engine off.</summary>
    internal static string? SwitchedOff(string? value) =>
        value is "0" ? $"the environment variable {SwitchVariable} is 0 (the operator's switch)" : null;

    private static string? FindUnavailableReason()
    {
        if (!OperatingSystem.IsLinux())
        {
            return "the OpenSSL engine runs on Linux only";
        }

        return Missing("libssl.so.3", SslFunctions) ?? Missing("libcrypto.so.3", CryptoFunctions);
    }

    private static string? Missing(string library, string[] functions)
    {
        if (!NativeLibrary.TryLoad(library, out nint handle))
        {
            return $"{library} cannot be loaded (OpenSSL 3 is not installed; Debian and Ubuntu package libssl3)";
        }

        foreach (string function in functions)
        {
            if (!NativeLibrary.TryGetExport(handle, function, out _))
            {
                return $"{library} has no function {function} (the OpenSSL engine needs OpenSSL 3)";
            }
        }

        return null;
    }
}
