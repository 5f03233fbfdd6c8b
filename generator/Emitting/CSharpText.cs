using System.Globalization;
using System.Text;
using Falconet.Generator.Planning;

namespace Falconet.Generator.Emitting;

/// <summary>Formats literals and comments of the emitted C#, always with the invariant culture.</summary>
internal static class CSharpText
{
    /// <summary>A C# string literal ("...") with every character outside printable ASCII escaped.</summary>
    public static string StringLiteral(string text)
    {
        var builder = new StringBuilder(text.Length + 2);
        builder.Append('"');
        foreach (char c in text)
        {
            switch (c)
            {
                case '"': builder.Append("\\\""); break;
                case '\\': builder.Append("\\\\"); break;
                case '\r': builder.Append("\\r"); break;
                case '\n': builder.Append("\\n"); break;
                case '\t': builder.Append("\\t"); break;
                default:
                    if (c < ' ' || c > '~')
                    {
                        builder.Append("\\u").Append(((int)c).ToString("X4", CultureInfo.InvariantCulture));
                    }
                    else
                    {
                        builder.Append(c);
                    }

                    break;
            }
        }

        return builder.Append('"').ToString();
    }

    /// <summary>A hexadecimal literal padded to the chunk size, with the suffix its integer type needs.</summary>
    public static string Hex(ulong value, int size)
    {
        string digits = "0x" + value.ToString("X" + (size * 2).ToString(CultureInfo.InvariantCulture), CultureInfo.InvariantCulture);
        return size switch
        {
            8 => digits + "UL",
            4 => digits + "u",
            _ => digits,
        };
    }

    /// <summary>The integer type of a chunk read.</summary>
    public static string ReadType(int size) => size switch
    {
        8 => "ulong",
        4 => "uint",
        2 => "ushort",
        _ => "byte",
    };

    /// <summary>The matched text quoted for a comment; the text is a validated token, so it cannot end the comment.</summary>
    public static string Quote(string text) => "\"" + text + "\"";

    /// <summary>The comment of a chunk: which bytes of which text it matches and how.</summary>
    public static string ChunkComment(string text, ByteChunk chunk, int textLength, bool caseInsensitive)
    {
        int last = chunk.Offset + chunk.Size - 1;
        if (last >= textLength)
        {
            last = textLength - 1;
        }

        string range = last == chunk.Offset
            ? "byte " + Int(chunk.Offset)
            : "bytes " + Int(chunk.Offset) + ".." + Int(last);
        return "// " + Quote(text) + " " + range + ", " + (caseInsensitive ? "case-insensitive" : "exact");
    }

    public static string Int(int value) => value.ToString(CultureInfo.InvariantCulture);
}
