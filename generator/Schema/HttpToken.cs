namespace Falconet.Generator.Schema;

/// <summary>RFC 9110 token characters (tchar), from the definition the runtime's parser uses.</summary>
internal static class HttpToken
{
    public static bool IsTokenChar(char c) => Falconet.Text.HttpTokenChars.Contains(c);

    public static bool IsAsciiLetter(char c) => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
