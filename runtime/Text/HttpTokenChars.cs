namespace Falconet.Text;

// The one definition of the HTTP token alphabet and of the longest method. The runtime compiles this file, and the
// generator (netstandard2.0) links it, so the parser, the generator's schema checks and the code it emits agree.

/// <summary>RFC 9110 section 5.6.2: the tchar set, every byte a token (method, field name, coding) may hold.</summary>
internal static class HttpTokenChars
{
    /// <summary>Every tchar: the punctuation, then digits and letters.</summary>
    public const string All = "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

    /// <summary>
    /// The longest method token in bytes. The parser answers a longer one 501 (RFC 9112 section 3: longer than any
    /// method the server implements; the longest registered method, UPDATEREDIRECTREF, has 17), and a schema may not
    /// name a longer method, so every method the generated matcher knows is one the parser accepts.
    /// </summary>
    public const int MaxMethodLength = 32;

    /// <summary>True when <paramref name="c"/> is a tchar.</summary>
    public static bool Contains(char c) => c < 128 && All.IndexOf(c) >= 0;
}
