#pragma once
// The published EMVCo vectors of reference-notes.md ("Test vectors"), shared by the EMVCo and
// the QR image tests.
#include <string_view>

namespace tesoro::test_vectors {

constexpr std::string_view k_pix_static =
    "00020126360014BR.GOV.BCB.PIX0114+5511943214321520400005303986540566.665802BR5907EMPRESA"
    "6008BRASILIA62080503***6304170E";
// The same with 62 declaring the 7 characters it holds, and its CRC computed again.
constexpr std::string_view k_pix_static_fixed =
    "00020126360014BR.GOV.BCB.PIX0114+5511943214321520400005303986540566.665802BR5907EMPRESA"
    "6008BRASILIA62070503***630404ED";
constexpr std::string_view k_pix_dynamic =
    "00020101021226770014BR.GOV.BCB.PIX2555pix.example.com/qr/93598be0-1bd0-4997-8318-81776a1d8a99"
    "5204000053039865802BR5907EMPRESA6009SAO PAULO62070503***6304EEAB";
constexpr std::string_view k_colombian =
    "00020101021226320014CO.COM.CRB.LLA0410@PRUEBA12349250014CO.COM.CRB.RED0103CRB52040000530317054"
    "0815000.005802CO5916TIENDA DE PRUEBA6006BOGOTA610611011162180708TERM000108020090380016CO.COM."
    "CRB.TRXID0114P123456789123463047023";

}  // namespace tesoro::test_vectors
